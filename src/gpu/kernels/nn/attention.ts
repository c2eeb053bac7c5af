/**
 * GPU wrappers for causal multi-head attention: kernels/nn/attention_forward.wgsl and
 * kernels/nn/attention_backward_{scores,grads}.wgsl. CPU twin: src/ops/nn/attention.ts.
 *
 * Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH.
 * Dispatch: one invocation per (b, h, t) row, B·NH·T invocations in workgroups of 64 spread over
 * (x, y), for each of the three kernels; no workgroup memory, no barriers. The backward is two
 * dispatches: score gradients into `dscores` (B, NH, T, T), a buffer the caller provides, then
 * dq, dk, dv per (b, h, position): deterministic, no atomics.
 *
 * WebGPU forbids binding one buffer read-only and writable in the same dispatch (even at disjoint
 * offsets), so outputs must live in other buffers than the inputs of the same dispatch: out and
 * probs apart from qkv; dscores apart from dout, qkv, probs and dqkv; dqkv apart from all inputs.
 */
import backwardGradsSource from '../../../../kernels/nn/attention_backward_grads.wgsl?raw';
import backwardScoresSource from '../../../../kernels/nn/attention_backward_scores.wgsl?raw';
import forwardSource from '../../../../kernels/nn/attention_forward.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import { checkOneOf } from '../../../ops/validate';
import {
  type AttentionShape,
  checkAttentionBackwardInput,
  checkAttentionForwardInput,
  checkAttentionShape,
} from '../../../ops/nn/attention';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { ROW_WORKGROUP_SIZES, type RowWorkgroupSize } from '../row-workgroup-size';
import { PooledBuffers } from '../run-convenience';

const rowUniforms = [
  { name: 'rows', type: 'u32' },
  { name: 'seq', type: 'u32' },
  { name: 'heads', type: 'u32' },
  { name: 'channels', type: 'u32' },
] as const;

export const attentionForwardKernel = defineKernel({
  name: 'attention_forward',
  source: forwardSource,
  uniforms: [...rowUniforms, { name: 'scale', type: 'f32' }],
  storage: [
    { name: 'qkv', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'probs', access: 'read_write' },
  ],
});

export const attentionBackwardScoresKernel = defineKernel({
  name: 'attention_backward_scores',
  source: backwardScoresSource,
  uniforms: rowUniforms,
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'qkv', access: 'read' },
    { name: 'probs', access: 'read' },
    { name: 'dscores', access: 'read_write' },
  ],
});

export const attentionBackwardGradsKernel = defineKernel({
  name: 'attention_backward_grads',
  source: backwardGradsSource,
  uniforms: [...rowUniforms, { name: 'scale', type: 'f32' }],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'qkv', access: 'read' },
    { name: 'probs', access: 'read' },
    { name: 'dscores', access: 'read' },
    { name: 'dqkv', access: 'read_write' },
  ],
});

export interface AttentionGpuOptions {
  /** Invocations per workgroup (one invocation per row): 32, 64, 128 or 256. Default 64. */
  workgroupSize?: RowWorkgroupSize;
}

/**
 * A binding must hold at least `elements` f32 and fit one storage binding. Reads only sizes (no
 * GPU data), so encode functions fail with a message naming the tensor instead of a validation
 * error at submit.
 */
export function checkRef(
  gpu: GpuContext,
  op: string,
  name: string,
  ref: BufferRef,
  elements: number,
): void {
  checkBindingSize(gpu, elements, `${op} ${name}`);
  const bytes =
    'buffer' in ref ? (ref.size ?? ref.buffer.size - (ref.offset ?? 0)) : (ref as GPUBuffer).size;
  if (bytes < elements * 4) {
    throw new OpInputError(
      op,
      name,
      `must bind at least ${elements} f32 (${elements * 4} bytes), got ${bytes} bytes`,
    );
  }
}

/**
 * Invocations per workgroup (each one a row). 64 measured fastest or within 10% of it on
 * SwiftShader at B=64 T=32 C=64 NH=4 and B=32 T=64 C=128 NH=4; a common choice on hardware too.
 */
export const DEFAULT_ATTENTION_WORKGROUP_SIZE = 64;

export function resolveAttentionWorkgroupSize(
  op: string,
  options: AttentionGpuOptions,
): RowWorkgroupSize {
  const size = options.workgroupSize ?? DEFAULT_ATTENTION_WORKGROUP_SIZE;
  checkOneOf(op, 'workgroupSize', size, ROW_WORKGROUP_SIZES);
  return size;
}

/** Records the forward: qkv (B, T, 3C) → out (B, T, C), probs (B, NH, T, T). */
export async function encodeAttentionForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { qkv: BufferRef; out: BufferRef; probs: BufferRef },
  shape: AttentionShape,
  options: AttentionGpuOptions = {},
): Promise<void> {
  const op = 'attentionForward';
  const hs = checkAttentionShape(op, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  checkRef(gpu, op, 'qkv', buffers.qkv, B * T * 3 * C);
  checkRef(gpu, op, 'out', buffers.out, B * T * C);
  checkRef(gpu, op, 'probs', buffers.probs, B * NH * T * T);
  const WORKGROUP_SIZE = resolveAttentionWorkgroupSize(op, options);
  const pipeline = await gpu.pipelines.get(attentionForwardKernel, { WORKGROUP_SIZE });
  const rows = B * NH * T;
  batch.dispatch(attentionForwardKernel, {
    pipeline,
    buffers,
    uniforms: { rows, seq: T, heads: NH, channels: C, scale: 1 / Math.sqrt(hs) },
    workgroups: invocationGrid(gpu, rows, WORKGROUP_SIZE),
  });
}

/**
 * Records the backward: dout (B, T, C), the forward's qkv and probs → dqkv (B, T, 3C), every
 * element written. dscores (B, NH, T, T) is scratch the caller allocates (contents not kept).
 */
export async function encodeAttentionBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    dout: BufferRef;
    qkv: BufferRef;
    probs: BufferRef;
    dqkv: BufferRef;
    dscores: BufferRef;
  },
  shape: AttentionShape,
  options: AttentionGpuOptions = {},
): Promise<void> {
  const op = 'attentionBackward';
  const hs = checkAttentionShape(op, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  checkRef(gpu, op, 'dout', buffers.dout, B * T * C);
  checkRef(gpu, op, 'qkv', buffers.qkv, B * T * 3 * C);
  checkRef(gpu, op, 'probs', buffers.probs, B * NH * T * T);
  checkRef(gpu, op, 'dqkv', buffers.dqkv, B * T * 3 * C);
  checkRef(gpu, op, 'dscores', buffers.dscores, B * NH * T * T);
  const WORKGROUP_SIZE = resolveAttentionWorkgroupSize(op, options);
  const [scoresPipeline, gradsPipeline] = await Promise.all([
    gpu.pipelines.get(attentionBackwardScoresKernel, { WORKGROUP_SIZE }),
    gpu.pipelines.get(attentionBackwardGradsKernel, { WORKGROUP_SIZE }),
  ]);
  const rows = B * NH * T;
  const workgroups = invocationGrid(gpu, rows, WORKGROUP_SIZE);
  const { dout, qkv, probs, dqkv, dscores } = buffers;
  const uniforms = { rows, seq: T, heads: NH, channels: C };
  batch.dispatch(attentionBackwardScoresKernel, {
    pipeline: scoresPipeline,
    buffers: { dout, qkv, probs, dscores },
    uniforms,
    workgroups,
  });
  batch.dispatch(attentionBackwardGradsKernel, {
    pipeline: gradsPipeline,
    buffers: { dout, qkv, probs, dscores, dqkv },
    uniforms: { ...uniforms, scale: 1 / Math.sqrt(hs) },
    workgroups,
  });
}

/** Convenience path: check, upload, run, read back (one sync point). */
export async function attentionForwardGpu(
  gpu: GpuContext,
  qkv: Float32Array,
  shape: AttentionShape,
  options: AttentionGpuOptions = {},
): Promise<{ out: Float32Array; probs: Float32Array }> {
  checkAttentionForwardInput(qkv, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      qkv: pooled.upload(qkv, 'qkv'),
      out: pooled.storage(B * T * C, 'attention out'),
      probs: pooled.storage(B * NH * T * T, 'attention probs'),
    };
    const batch = gpu.beginBatch('attentionForward');
    await encodeAttentionForward(gpu, batch, buffers, shape, options);
    batch.submit();
    const [out, probs] = await Promise.all([
      gpu.readF32(buffers.out, B * T * C),
      gpu.readF32(buffers.probs, B * NH * T * T),
    ]);
    return { out, probs };
  } finally {
    pooled.release();
  }
}

/** Convenience path: check, upload, run, read back dqkv (B, T, 3C) (one sync point). */
export async function attentionBackwardGpu(
  gpu: GpuContext,
  dout: Float32Array,
  qkv: Float32Array,
  probs: Float32Array,
  shape: AttentionShape,
  options: AttentionGpuOptions = {},
): Promise<Float32Array> {
  checkAttentionBackwardInput(dout, qkv, probs, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dout: pooled.upload(dout, 'dout'),
      qkv: pooled.upload(qkv, 'qkv'),
      probs: pooled.upload(probs, 'attention probs'),
      dqkv: pooled.storage(B * T * 3 * C, 'dqkv'),
      dscores: pooled.storage(B * NH * T * T, 'attention dscores'),
    };
    const batch = gpu.beginBatch('attentionBackward');
    await encodeAttentionBackward(gpu, batch, buffers, shape, options);
    batch.submit();
    return await gpu.readF32(buffers.dqkv, B * T * 3 * C);
  } finally {
    pooled.release();
  }
}
