/**
 * GPU wrapper for kernels/nn/unpack_f16.wgsl: f16 pairs (u32) → f32; CPU twin:
 * src/ops/nn/unpack-f16.ts. Dispatch: one u32 (two outputs) per invocation, ⌈words / 256⌉
 * workgroups over (x, y).
 *
 *   packed: (⌈count / 2⌉) u32   out: (count) f32
 */
import source from '../../../../kernels/nn/unpack_f16.wgsl?raw';
import { checkUnpackF16Input, packedWords } from '../../../ops/nn/unpack-f16';
import { checkInt } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { ELEMENTWISE_WORKGROUP_SIZE, checkRefElements } from './add';

export const unpackF16Kernel = defineKernel({
  name: 'unpack_f16',
  source,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'packed', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

/**
 * Records out = the `count` f16 values of `packed`, widened. A slice's offset must be a multiple
 * of the adapter's minStorageBufferOffsetAlignment (256 bytes: 128 halves) like any binding.
 */
export async function encodeUnpackF16(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { packed: BufferRef; out: BufferRef },
  count: number,
): Promise<void> {
  const op = 'unpackF16';
  checkInt(op, 'count', count, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, count, `${op} out`);
  const words = packedWords(count);
  // A u32 word and an f32 are both 4 bytes: the element check of the f32 bindings serves both.
  checkRefElements(op, 'packed', buffers.packed, words);
  checkRefElements(op, 'out', buffers.out, count);
  const pipeline = await gpu.pipelines.get(unpackF16Kernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(unpackF16Kernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, words, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path of unpackF16(): the CPU twin's checks, one readback. */
export async function unpackF16Gpu(
  gpu: GpuContext,
  packed: Uint32Array,
  count: number,
): Promise<Float32Array> {
  checkUnpackF16Input(packed, count);
  checkBindingSize(gpu, count, 'unpackF16 out');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      packed: pooled.upload(packed, 'unpackF16 packed'),
      out: pooled.storage(count, 'unpackF16 out'),
    };
    const batch = gpu.beginBatch('unpackF16');
    await encodeUnpackF16(gpu, batch, buffers, count);
    batch.submit();
    return await gpu.readF32(buffers.out, count);
  } finally {
    pooled.release();
  }
}
