/**
 * GPU wrapper for kernels/nn/axpy.wgsl (y ← α·x + y); CPU twin: src/ops/nn/axpy.ts. Dispatch:
 * one element per invocation, ceil(count / 256) workgroups over (x, y).
 */
import source from '../../../../kernels/nn/axpy.wgsl?raw';
import { checkAxpyAlpha, checkAxpyInput } from '../../../ops/nn/axpy';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { ELEMENTWISE_WORKGROUP_SIZE, checkElementwise } from './add';

export const axpyKernel = defineKernel({
  name: 'axpy',
  source,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'alpha', type: 'f32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'y', access: 'read_write' },
  ],
});

/** Records y ← α·x + y over the first `count` f32. x in another buffer than y. */
export async function encodeAxpy(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; y: BufferRef },
  count: number,
  alpha: number,
): Promise<void> {
  checkElementwise(gpu, 'axpy', buffers, count);
  checkAxpyAlpha(alpha);
  const pipeline = await gpu.pipelines.get(axpyKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(axpyKernel, {
    pipeline,
    buffers,
    uniforms: { count, alpha },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path of axpy(): y ← α·x + y computed on the GPU, written back into `y`. */
export async function axpyGpu(
  gpu: GpuContext,
  alpha: number,
  x: Float32Array,
  y: Float32Array,
): Promise<void> {
  checkAxpyInput(alpha, x, y);
  checkBindingSize(gpu, y.length, 'axpy tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = { x: pooled.upload(x, 'axpy x'), y: pooled.upload(y, 'axpy y') };
    const batch = gpu.beginBatch('axpy');
    await encodeAxpy(gpu, batch, buffers, y.length, alpha);
    batch.submit();
    y.set(await gpu.readF32(buffers.y, y.length));
  } finally {
    pooled.release();
  }
}
