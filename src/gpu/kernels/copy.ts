/**
 * GPU wrapper for kernels/copy.wgsl; CPU twin: src/ops/copy.ts.
 * Dispatch: one vec4 per invocation, ceil(L / 4 / workgroupSize) workgroups over (x, y).
 * Used by `npm run bench` as the device's bandwidth ceiling.
 */
import source from '../../../kernels/copy.wgsl?raw';
import { checkCopyInput, COPY_WORKGROUP_SIZES, type CopyOptions } from '../../ops/copy';
import { OpInputError } from '../../ops/errors';
import { checkInt, checkOneOf } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { GpuLimitError } from '../errors';
import { defineKernel } from '../kernel';

export const copyKernel = defineKernel({
  name: 'copy',
  source,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'input', access: 'read' },
    { name: 'output', access: 'read_write' },
  ],
});

const OP = 'copy';

/** Bytes the kernel touches in each buffer for `length` f32 elements (whole vec4s). */
export function copyByteLength(length: number): number {
  return Math.ceil(length / 4) * 16;
}

/**
 * Records a copy of `length` f32 elements from `input` to `output` (resident buffers, each at
 * least copyByteLength(length) bytes; the last vec4 may carry up to 3 elements past `length`).
 */
export async function encodeCopy(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { input: GPUBuffer; output: GPUBuffer },
  length: number,
  options: CopyOptions = {},
): Promise<void> {
  checkInt(OP, 'length', length, 1, 2 ** 31 - 1);
  const workgroupSize = options.workgroupSize ?? 256;
  checkOneOf(OP, 'workgroupSize', workgroupSize, COPY_WORKGROUP_SIZES);
  const bytes = copyByteLength(length);
  const maxBinding = gpu.summary.limits.maxStorageBufferBindingSize;
  if (bytes > maxBinding) {
    throw new GpuLimitError('maxStorageBufferBindingSize (bytes)', bytes, maxBinding, 'copy');
  }
  for (const [name, buffer] of Object.entries(buffers)) {
    if (buffer.size < bytes) {
      throw new OpInputError(OP, name, `buffer must hold ${bytes} bytes, has ${buffer.size}`);
    }
  }
  const count = bytes / 16;
  const pipeline = await gpu.pipelines.get(copyKernel, { WORKGROUP_SIZE: workgroupSize });
  batch.dispatch(copyKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: workgroupGrid(
      Math.ceil(count / workgroupSize),
      gpu.summary.limits.maxComputeWorkgroupsPerDimension,
    ),
  });
}

/** Convenience path: check, upload, copy, read back (one sync point). */
export async function copyGpu(
  gpu: GpuContext,
  x: Float32Array,
  options: CopyOptions = {},
): Promise<Float32Array> {
  checkCopyInput(x, options);
  // Pooled sizes round up to 256 bytes, so both buffers hold whole vec4s.
  const input = gpu.upload(x, 'copy input');
  const output = gpu.storage(copyByteLength(x.length), 'copy output');
  try {
    const batch = gpu.beginBatch(OP);
    await encodeCopy(gpu, batch, { input, output }, x.length, options);
    batch.submit();
    return await gpu.readF32(output, x.length);
  } finally {
    gpu.pool.release(input);
    gpu.pool.release(output);
  }
}
