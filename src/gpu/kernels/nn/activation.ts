/**
 * GPU wrappers for kernels/nn/activation.wgsl (y = f(x)) and kernels/nn/activation_backward.wgsl
 * (dx = dy · f′(x)); CPU twins: src/ops/nn/activation.ts. Dispatch: one element per invocation,
 * ceil(count / 256) workgroups over (x, y).
 *
 * The kind ('gelu' | 'tanh' | 'relu') is the WGSL override constant KIND, not a uniform: each
 * kind gets its own pipeline (cached, 3 per direction) with the branch removed at pipeline
 * creation, and a layer's kind never changes between dispatches, so nothing is lost.
 */
import forwardSource from '../../../../kernels/nn/activation.wgsl?raw';
import backwardSource from '../../../../kernels/nn/activation_backward.wgsl?raw';
import {
  ACTIVATIONS,
  type Activation,
  checkActivationBackwardInput,
  checkActivationInput,
} from '../../../ops/nn/activation';
import { checkOneOf } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { ELEMENTWISE_WORKGROUP_SIZE, checkElementwise } from './add';

export const activationForwardKernel = defineKernel({
  name: 'activation',
  source: forwardSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'y', access: 'read_write' },
  ],
});

export const activationBackwardKernel = defineKernel({
  name: 'activation_backward',
  source: backwardSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'dy', access: 'read' },
    { name: 'x', access: 'read' },
    { name: 'dx', access: 'read_write' },
  ],
});

/** The WGSL KIND constant of each activation (its index in ACTIVATIONS). */
function kindConstant(op: string, kind: Activation): number {
  checkOneOf(op, 'kind', kind, ACTIVATIONS);
  return ACTIVATIONS.indexOf(kind);
}

/** Records y = f(x) over `count` f32. x, y: (count); y in another buffer than x (see add.ts). */
export async function encodeActivationForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; y: BufferRef },
  count: number,
  kind: Activation,
): Promise<void> {
  const KIND = kindConstant('activationForward', kind);
  checkElementwise(gpu, 'activationForward', buffers, count);
  const pipeline = await gpu.pipelines.get(activationForwardKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
    KIND,
  });
  batch.dispatch(activationForwardKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Records dx = dy · f′(x) over `count` f32, x the forward's input; dx in another buffer. */
export async function encodeActivationBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { dy: BufferRef; x: BufferRef; dx: BufferRef },
  count: number,
  kind: Activation,
): Promise<void> {
  const KIND = kindConstant('activationBackward', kind);
  checkElementwise(gpu, 'activationBackward', buffers, count);
  const pipeline = await gpu.pipelines.get(activationBackwardKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
    KIND,
  });
  batch.dispatch(activationBackwardKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path of activationForward(): same checks, one readback. */
export async function activationForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  kind: Activation,
): Promise<Float32Array> {
  checkActivationInput(x, kind);
  checkBindingSize(gpu, x.length, 'activationForward tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      x: pooled.upload(x, 'activation x'),
      y: pooled.storage(x.length, 'activation y'),
    };
    const batch = gpu.beginBatch('activationForward');
    await encodeActivationForward(gpu, batch, buffers, x.length, kind);
    batch.submit();
    return await gpu.readF32(buffers.y, x.length);
  } finally {
    pooled.release();
  }
}

/** Convenience path of activationBackward(): same checks, one readback. */
export async function activationBackwardGpu(
  gpu: GpuContext,
  dy: Float32Array,
  x: Float32Array,
  kind: Activation,
): Promise<Float32Array> {
  checkActivationBackwardInput(dy, x, kind);
  checkBindingSize(gpu, x.length, 'activationBackward tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dy: pooled.upload(dy, 'activation dy'),
      x: pooled.upload(x, 'activation x'),
      dx: pooled.storage(x.length, 'activation dx'),
    };
    const batch = gpu.beginBatch('activationBackward');
    await encodeActivationBackward(gpu, batch, buffers, x.length, kind);
    batch.submit();
    return await gpu.readF32(buffers.dx, x.length);
  } finally {
    pooled.release();
  }
}
