/**
 * GPU wrappers for causal grouped-query attention (Llama, Qwen2, Qwen3); CPU twin:
 * src/ops/nn/attention-gqa.ts (shapes and the math are defined there).
 *
 *   forward  kernels/nn/attention_gqa_forward.wgsl: `lanes` threads per (b, h, t) row (1 on
 *            software adapters, 32–64 on hardware), keys in tiles of 8·`lanes` with an online
 *            softmax; out is its own accumulator, probs optional (a decoding step does not need
 *            them: B = 64, NH = 15, S = 2048 would be 7.5 MiB per layer and step). k and v may be
 *            a KV cache of `kvCapacity` rows per sequence, of which rows 0 … P + T − 1 are read.
 *            Without probs the keys may be split into chunks (one workgroup each, so B = 1
 *            decoding with NH rows still spreads over a GPU), merged by
 *            kernels/nn/attention_gqa_combine.wgsl.
 *   backward kernels/nn/attention_gqa_backward_scores.wgsl: dscores and dq, one invocation per row;
 *            kernels/nn/attention_gqa_backward_kv.wgsl: dk, dv, one invocation per element, summed
 *            over the group's query heads in a fixed order (deterministic, no atomics).
 *
 * Buffers: q, out, dout, dq (B, T, NH·hs); k, v, dk, dv (B, S, NKV·hs) (the forward's k, v:
 * (B, kvCapacity, NKV·hs)); probs, dscores (B, NH, T, S). WebGPU rejects one buffer bound
 * read-only and writable in one dispatch, so every output lives apart from that dispatch's inputs:
 * out and probs apart from q, k, v; dscores and dq apart from dout, k, v, probs; dk and dv apart
 * from q, dout, probs, dscores. Outputs of one dispatch may share a buffer at disjoint ranges
 * (overlapping bindings, one of them writable, are rejected).
 */
import backwardKvSource from '../../../../kernels/nn/attention_gqa_backward_kv.wgsl?raw';
import backwardScoresSource from '../../../../kernels/nn/attention_gqa_backward_scores.wgsl?raw';
import combineSource from '../../../../kernels/nn/attention_gqa_combine.wgsl?raw';
import forwardSource from '../../../../kernels/nn/attention_gqa_forward.wgsl?raw';
import {
  checkGqaBackwardInput,
  checkGqaForwardInput,
  checkGqaShape,
  GQA_LIMITS,
  type GqaShape,
} from '../../../ops/nn/attention-gqa';
import { OpInputError } from '../../../ops/errors';
import { checkInt, checkOneOf } from '../../../ops/validate';
import { type BufferRef, type CommandBatch, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { reflectConstant } from '../../wgsl-reflect';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { scratchBuffer } from '../loss-aggregation';
import { PooledBuffers } from '../run-convenience';
import { checkRef } from './attention';
import { pastsBinding } from './kv-cache';
import { defaultThreadsPerRow, ROW_THREADS, type RowThreads } from './row-split';

/** Threads per workgroup of the forward (its rows × lanes) and of the backward's kernels. */
const WORKGROUP_SIZE = 64;

const shapeUniforms = [
  { name: 'seq', type: 'u32' },
  { name: 'past', type: 'u32' },
  { name: 'heads', type: 'u32' },
  { name: 'kv_heads', type: 'u32' },
  { name: 'head_size', type: 'u32' },
] as const;

export const gqaForwardKernel = defineKernel({
  name: 'attention_gqa_forward',
  source: forwardSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    ...shapeUniforms,
    { name: 'kv_capacity', type: 'u32' },
    { name: 'chunks', type: 'u32' },
    { name: 'chunk_keys', type: 'u32' },
    { name: 'scale', type: 'f32' },
    { name: 'per_sequence', type: 'u32' },
  ],
  storage: [
    { name: 'q', access: 'read' },
    { name: 'k', access: 'read' },
    { name: 'v', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'probs', access: 'read_write' },
    { name: 'pasts', access: 'read' },
  ],
});

export const gqaCombineKernel = defineKernel({
  name: 'attention_gqa_combine',
  source: combineSource,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'seq', type: 'u32' },
    { name: 'heads', type: 'u32' },
    { name: 'head_size', type: 'u32' },
    { name: 'chunks', type: 'u32' },
  ],
  storage: [
    { name: 'partials', access: 'read' },
    { name: 'stats', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

export const gqaBackwardScoresKernel = defineKernel({
  name: 'attention_gqa_backward_scores',
  source: backwardScoresSource,
  uniforms: [{ name: 'rows', type: 'u32' }, ...shapeUniforms, { name: 'scale', type: 'f32' }],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'k', access: 'read' },
    { name: 'v', access: 'read' },
    { name: 'probs', access: 'read' },
    { name: 'dscores', access: 'read_write' },
    { name: 'dq', access: 'read_write' },
  ],
});

export const gqaBackwardKvKernel = defineKernel({
  name: 'attention_gqa_backward_kv',
  source: backwardKvSource,
  uniforms: [{ name: 'count', type: 'u32' }, ...shapeUniforms],
  storage: [
    { name: 'q', access: 'read' },
    { name: 'dout', access: 'read' },
    { name: 'probs', access: 'read' },
    { name: 'dscores', access: 'read' },
    { name: 'dk', access: 'read_write' },
    { name: 'dv', access: 'read_write' },
  ],
});

/** The forward's shape: the CPU twin's, plus the rows per sequence of a KV cache. */
export interface GqaGpuShape extends GqaShape {
  /** Smax, rows per sequence in the k and v buffers, ≥ P + T. Default P + T (dense k, v). */
  kvCapacity?: number;
}

/** GPU-only tuning; the CPU twin has no counterpart. */
export interface GqaGpuOptions {
  /**
   * Threads per query row in the forward: 1, 2, 4, …, 64. Default: 1 on software adapters,
   * 32–64 on hardware (defaultThreadsPerRow of row-split.ts).
   */
  lanes?: RowThreads;
  /**
   * Key chunks per query row (forward without probs only): each chunk is its own workgroup and a
   * second dispatch merges them, so a decoding step of few rows over many keys spreads over the
   * GPU. 1: no split. Default: 1 on software adapters and with probs; on hardware enough chunks
   * for about SPLIT_TARGET_GROUPS workgroups, one tile of keys each at least.
   */
  chunks?: number;
}

/**
 * Workgroups the default split aims at on hardware: a few per compute unit of a large GPU (an
 * H100 has 132). Not measured on hardware yet: a starting point, overridable per call.
 */
const SPLIT_TARGET_GROUPS = 512;

/** Keys per tile of the forward: lanes × KEYS_PER_LANE of attention_gqa_forward.wgsl. */
const KEYS_PER_LANE = reflectConstant(forwardSource, 'KEYS_PER_LANE');

export interface GqaForwardBuffers {
  q: BufferRef;
  k: BufferRef;
  v: BufferRef;
  out: BufferRef;
  /** Left out when no backward follows (decoding, scoring): then probs are never written. */
  probs?: BufferRef;
  /**
   * (B) u32: each sequence's own past, ≤ shape.past (the twin's `pasts`, on the GPU: not checked,
   * never read back). Left out: shape.past for every sequence.
   */
  pasts?: BufferRef | undefined;
}

export interface GqaBackwardBuffers {
  dout: BufferRef;
  q: BufferRef;
  k: BufferRef;
  v: BufferRef;
  probs: BufferRef;
  /** Scratch (B, NH, T, S) the caller provides; its contents are not kept. */
  dscores: BufferRef;
  dq: BufferRef;
  dk: BufferRef;
  dv: BufferRef;
}

/**
 * P, S and the element counts of a shape, after the CPU twin's checks and kvCapacity's. `dense`
 * (the backward, the convenience paths): k and v hold exactly S rows per sequence.
 */
function sizes(op: string, shape: GqaGpuShape, dense: boolean) {
  const past = checkGqaShape(op, shape);
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const keys = past + T;
  const capacity = dense ? keys : (shape.kvCapacity ?? keys);
  checkInt(op, 'kvCapacity', capacity, keys, GQA_LIMITS.maxKeys);
  return {
    past,
    keys,
    capacity,
    q: B * T * NH * hs,
    kv: B * keys * NKV * hs,
    cache: B * capacity * NKV * hs,
    probs: B * NH * T * keys,
  };
}

/**
 * Records the forward: out (B, T, NH·hs) and, when `buffers.probs` is given, probs (B, NH, T, S).
 * With P > 0, k and v hold the P cached rows and the T new ones (kernels/nn/kv_cache_append.wgsl
 * writes those).
 */
export async function encodeGqaAttentionForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GqaForwardBuffers,
  shape: GqaGpuShape,
  options: GqaGpuOptions = {},
): Promise<void> {
  const op = 'gqaAttentionForward';
  const n = sizes(op, shape, false);
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  checkRef(gpu, op, 'q', buffers.q, n.q);
  checkRef(gpu, op, 'k', buffers.k, n.cache);
  checkRef(gpu, op, 'v', buffers.v, n.cache);
  checkRef(gpu, op, 'out', buffers.out, n.q);
  if (buffers.probs) checkRef(gpu, op, 'probs', buffers.probs, n.probs);
  const pasts = pastsBinding(gpu, op, shape.pasts, buffers.pasts, B);
  const lanes = options.lanes ?? defaultThreadsPerRow(gpu.summary, hs);
  checkOneOf(op, 'lanes', lanes, ROW_THREADS);
  const rows = B * NH * T;
  const rowGroupCount = Math.ceil(rows / (WORKGROUP_SIZE / lanes));
  const tileKeys = lanes * KEYS_PER_LANE;
  const software = gpu.summary.isFallbackAdapter || gpu.summary.architecture === 'swiftshader';
  const wanted =
    options.chunks ??
    (software || buffers.probs
      ? 1
      : Math.min(Math.ceil(SPLIT_TARGET_GROUPS / rowGroupCount), Math.ceil(n.keys / tileKeys)));
  checkInt(op, 'chunks', wanted, 1, n.keys);
  if (wanted > 1 && buffers.probs) {
    throw new OpInputError(op, 'chunks', `must be 1 when probs are written, got ${wanted}`);
  }
  // Whole tiles per chunk; the last chunk may be shorter, and none is empty.
  const chunkKeys = Math.ceil(Math.ceil(n.keys / wanted) / tileKeys) * tileKeys;
  const chunks = Math.ceil(n.keys / chunkKeys);
  const split = chunks > 1;
  const pipeline = await gpu.pipelines.get(gqaForwardKernel, {
    WORKGROUP_SIZE,
    LANES: lanes,
    WRITE_PROBS: buffers.probs ? 1 : 0,
    SPLIT: split ? 1 : 0,
  });
  // Split: the chunks' partials and (max, sum) pairs go to scratch kept per device (consumed by
  // the combine dispatch right after, before any later encode can reuse them).
  if (split) checkBindingSize(gpu, rows * chunks * hs, `${op} split partials`);
  const partials = split
    ? scratchBuffer(gpu, 'gqa split partials', rows * chunks * hs * 4)
    : undefined;
  const stats = split ? scratchBuffer(gpu, 'gqa split stats', rows * chunks * 2 * 4) : undefined;
  batch.dispatch(gqaForwardKernel, {
    pipeline,
    // Without probs the kernel never touches its probs binding: a small placeholder fills it
    // (out bound twice would be rejected: overlapping bindings, one of them writable).
    buffers: {
      q: buffers.q,
      k: buffers.k,
      v: buffers.v,
      out: partials ?? buffers.out,
      probs: stats ?? buffers.probs ?? scratchBuffer(gpu, 'unused gqa probs', 16),
      pasts: pasts.pasts,
    },
    uniforms: {
      rows,
      seq: T,
      past: n.past,
      heads: NH,
      kv_heads: NKV,
      head_size: hs,
      kv_capacity: n.capacity,
      chunks,
      chunk_keys: chunkKeys,
      scale: 1 / Math.sqrt(hs),
      per_sequence: pasts.per_sequence,
    },
    workgroups: workgroupGrid(
      rowGroupCount * chunks,
      gpu.summary.limits.maxComputeWorkgroupsPerDimension,
    ),
  });
  if (!partials || !stats) return;
  const combinePipeline = await gpu.pipelines.get(gqaCombineKernel, { WORKGROUP_SIZE: 256 });
  batch.dispatch(gqaCombineKernel, {
    pipeline: combinePipeline,
    buffers: { partials, stats, out: buffers.out },
    uniforms: { count: n.q, seq: T, heads: NH, head_size: hs, chunks },
    workgroups: invocationGrid(gpu, n.q, 256),
  });
}

/**
 * Records the backward: dq (B, T, NH·hs), dk and dv (B, S, NKV·hs) from dout and the forward's
 * q, k, v (dense: kvCapacity = S) and probs. Every element of the outputs is written.
 */
export async function encodeGqaAttentionBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GqaBackwardBuffers,
  shape: GqaShape,
): Promise<void> {
  const op = 'gqaAttentionBackward';
  const n = sizes(op, shape, true);
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  checkRef(gpu, op, 'dout', buffers.dout, n.q);
  checkRef(gpu, op, 'q', buffers.q, n.q);
  checkRef(gpu, op, 'k', buffers.k, n.kv);
  checkRef(gpu, op, 'v', buffers.v, n.kv);
  checkRef(gpu, op, 'probs', buffers.probs, n.probs);
  checkRef(gpu, op, 'dscores', buffers.dscores, n.probs);
  checkRef(gpu, op, 'dq', buffers.dq, n.q);
  checkRef(gpu, op, 'dk', buffers.dk, n.kv);
  checkRef(gpu, op, 'dv', buffers.dv, n.kv);
  const [scoresPipeline, kvPipeline] = await Promise.all([
    gpu.pipelines.get(gqaBackwardScoresKernel, { WORKGROUP_SIZE }),
    gpu.pipelines.get(gqaBackwardKvKernel, { WORKGROUP_SIZE }),
  ]);
  const { dout, q, k, v, probs, dscores, dq, dk, dv } = buffers;
  const common = { seq: T, past: n.past, heads: NH, kv_heads: NKV, head_size: hs };
  const rows = B * NH * T;
  batch.dispatch(gqaBackwardScoresKernel, {
    pipeline: scoresPipeline,
    buffers: { dout, k, v, probs, dscores, dq },
    uniforms: { rows, ...common, scale: 1 / Math.sqrt(hs) },
    workgroups: invocationGrid(gpu, rows, WORKGROUP_SIZE),
  });
  batch.dispatch(gqaBackwardKvKernel, {
    pipeline: kvPipeline,
    buffers: { q, dout, probs, dscores, dk, dv },
    uniforms: { count: n.kv, ...common },
    workgroups: invocationGrid(gpu, n.kv, WORKGROUP_SIZE),
  });
}

/** Convenience path of gqaAttentionForward(): the CPU twin's checks, one sync point. */
export async function gqaAttentionForwardGpu(
  gpu: GpuContext,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  shape: GqaShape,
  options: GqaGpuOptions & { probs?: boolean } = {},
): Promise<{ out: Float32Array; probs: Float32Array | undefined }> {
  checkGqaForwardInput(q, k, v, shape);
  const n = sizes('gqaAttentionForward', shape, true);
  const wantProbs = options.probs ?? true;
  const pooled = new PooledBuffers(gpu);
  try {
    const { pasts, ...common } = shape;
    const buffers = {
      q: pooled.upload(q, 'gqa q'),
      k: pooled.upload(k, 'gqa k'),
      v: pooled.upload(v, 'gqa v'),
      out: pooled.storage(n.q, 'gqa out'),
      probs: wantProbs ? pooled.storage(n.probs, 'gqa probs') : undefined,
      pasts: pasts && pooled.upload(Uint32Array.from(pasts), 'gqa pasts'),
    };
    const batch = gpu.beginBatch('gqaAttentionForward');
    await encodeGqaAttentionForward(gpu, batch, buffers, common, options);
    batch.submit();
    const [out, probs] = await Promise.all([
      gpu.readF32(buffers.out, n.q),
      buffers.probs ? gpu.readF32(buffers.probs, n.probs) : undefined,
    ]);
    return { out, probs };
  } finally {
    pooled.release();
  }
}

/** Convenience path of gqaAttentionBackward(): the CPU twin's checks, one sync point. */
export async function gqaAttentionBackwardGpu(
  gpu: GpuContext,
  dout: Float32Array,
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  probs: Float32Array,
  shape: GqaShape,
): Promise<{ dq: Float32Array; dk: Float32Array; dv: Float32Array }> {
  checkGqaBackwardInput(dout, q, k, v, probs, shape);
  const n = sizes('gqaAttentionBackward', shape, true);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dout: pooled.upload(dout, 'gqa dout'),
      q: pooled.upload(q, 'gqa q'),
      k: pooled.upload(k, 'gqa k'),
      v: pooled.upload(v, 'gqa v'),
      probs: pooled.upload(probs, 'gqa probs'),
      dscores: pooled.storage(n.probs, 'gqa dscores'),
      dq: pooled.storage(n.q, 'gqa dq'),
      dk: pooled.storage(n.kv, 'gqa dk'),
      dv: pooled.storage(n.kv, 'gqa dv'),
    };
    const batch = gpu.beginBatch('gqaAttentionBackward');
    await encodeGqaAttentionBackward(gpu, batch, buffers, shape);
    batch.submit();
    const [dq, dk, dv] = await Promise.all([
      gpu.readF32(buffers.dq, n.q),
      gpu.readF32(buffers.dk, n.kv),
      gpu.readF32(buffers.dv, n.kv),
    ]);
    return { dq, dk, dv };
  } finally {
    pooled.release();
  }
}
