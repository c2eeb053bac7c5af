/**
 * GPU wrappers for kernels/nn/swiglu.wgsl (h = silu(g) ⊙ u) and kernels/nn/swiglu_backward.wgsl
 * (dg, du); CPU twins: src/ops/nn/swiglu.ts. Dispatch: one element per invocation,
 * ceil(count / 256) workgroups over (x, y).
 *
 *   g, u, h, dh, dg, du: (count) — (tokens, F) of a Llama / Qwen MLP, flattened.
 */
import forwardSource from '../../../../kernels/nn/swiglu.wgsl?raw';
import backwardSource from '../../../../kernels/nn/swiglu_backward.wgsl?raw';
import { checkSwigluBackwardInput, checkSwigluInput } from '../../../ops/nn/swiglu';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { ELEMENTWISE_WORKGROUP_SIZE, checkElementwise } from './add';

export const swigluForwardKernel = defineKernel({
  name: 'swiglu',
  source: forwardSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'g', access: 'read' },
    { name: 'u', access: 'read' },
    { name: 'h', access: 'read_write' },
  ],
});

export const swigluBackwardKernel = defineKernel({
  name: 'swiglu_backward',
  source: backwardSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'dh', access: 'read' },
    { name: 'g', access: 'read' },
    { name: 'u', access: 'read' },
    { name: 'dg', access: 'read_write' },
    { name: 'du', access: 'read_write' },
  ],
});

/** Records h = silu(g) ⊙ u over `count` f32; h in another buffer than g and u. */
export async function encodeSwigluForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { g: BufferRef; u: BufferRef; h: BufferRef },
  count: number,
): Promise<void> {
  checkElementwise(gpu, 'swigluForward', buffers, count);
  const pipeline = await gpu.pipelines.get(swigluForwardKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(swigluForwardKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Records dg, du over `count` f32 from dh and the forward's g, u; dg, du in another buffer. */
export async function encodeSwigluBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { dh: BufferRef; g: BufferRef; u: BufferRef; dg: BufferRef; du: BufferRef },
  count: number,
): Promise<void> {
  checkElementwise(gpu, 'swigluBackward', buffers, count);
  const pipeline = await gpu.pipelines.get(swigluBackwardKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(swigluBackwardKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path of swigluForward(): the CPU twin's checks, one readback. */
export async function swigluForwardGpu(
  gpu: GpuContext,
  g: Float32Array,
  u: Float32Array,
): Promise<Float32Array> {
  checkSwigluInput(g, u);
  checkBindingSize(gpu, g.length, 'swigluForward tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      g: pooled.upload(g, 'swiglu g'),
      u: pooled.upload(u, 'swiglu u'),
      h: pooled.storage(g.length, 'swiglu h'),
    };
    const batch = gpu.beginBatch('swigluForward');
    await encodeSwigluForward(gpu, batch, buffers, g.length);
    batch.submit();
    return await gpu.readF32(buffers.h, g.length);
  } finally {
    pooled.release();
  }
}

/** Convenience path of swigluBackward(): the CPU twin's checks, one sync point. */
export async function swigluBackwardGpu(
  gpu: GpuContext,
  dh: Float32Array,
  g: Float32Array,
  u: Float32Array,
): Promise<{ dg: Float32Array; du: Float32Array }> {
  checkSwigluBackwardInput(dh, g, u);
  checkBindingSize(gpu, g.length, 'swigluBackward tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dh: pooled.upload(dh, 'swiglu dh'),
      g: pooled.upload(g, 'swiglu g'),
      u: pooled.upload(u, 'swiglu u'),
      dg: pooled.storage(g.length, 'swiglu dg'),
      du: pooled.storage(g.length, 'swiglu du'),
    };
    const batch = gpu.beginBatch('swigluBackward');
    await encodeSwigluBackward(gpu, batch, buffers, g.length);
    batch.submit();
    const [dg, du] = await Promise.all([
      gpu.readF32(buffers.dg, g.length),
      gpu.readF32(buffers.du, g.length),
    ]);
    return { dg, du };
  } finally {
    pooled.release();
  }
}
