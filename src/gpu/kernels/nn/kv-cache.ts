/**
 * GPU wrapper for kernels/nn/kv_cache_append.wgsl: new key and value rows written into KV caches
 * of fixed capacity, in place. CPU twin: src/ops/nn/kv-cache.ts (shapes there).
 *
 * A generator allocates kCache and vCache (B, Smax, NKV·hs) once, appends each step's rows at
 * `past` and runs encodeGqaAttentionForward with kvCapacity = Smax, past = P: nothing is
 * reallocated or copied as the context grows. Every sequence of the batch shares `past`, or with
 * `buffers.pasts` (B u32 on the GPU, each ≤ shape.past: not checked, they are never read back)
 * each has its own: prompts of different lengths decoding in one batch.
 * Dispatch: one invocation per new element (B·T·W), 256 per workgroup over (x, y).
 * The caches are written, so they must live apart from kNew and vNew (WebGPU rejects one buffer
 * bound read-only and writable in one dispatch); kCache and vCache must not overlap.
 */
import source from '../../../../kernels/nn/kv_cache_append.wgsl?raw';
import {
  checkKvAppendInput,
  checkKvAppendShape,
  type KvAppendShape,
} from '../../../ops/nn/kv-cache';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { OpInputError } from '../../../ops/errors';
import { invocationGrid } from '../advantage-dispatch';
import { scratchBuffer } from '../loss-aggregation';
import { PooledBuffers } from '../run-convenience';
import { checkRef } from './attention';

const THREADS = 256;

export const kvCacheAppendKernel = defineKernel({
  name: 'kv_cache_append',
  source,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'seq', type: 'u32' },
    { name: 'width', type: 'u32' },
    { name: 'capacity', type: 'u32' },
    { name: 'past', type: 'u32' },
    { name: 'per_sequence', type: 'u32' },
  ],
  storage: [
    { name: 'k_new', access: 'read' },
    { name: 'v_new', access: 'read' },
    { name: 'k_cache', access: 'read_write' },
    { name: 'v_cache', access: 'read_write' },
    { name: 'pasts', access: 'read' },
  ],
});

/**
 * The `pasts` binding and `per_sequence` uniform of the KV kernels (this append and the GQA
 * attention forward): per-sequence pasts come as a GPU buffer of B u32 (a shape's `pasts`, the CPU
 * twin's form, is refused by name); without one a small placeholder fills the binding, never read.
 */
export function pastsBinding(
  gpu: GpuContext,
  op: string,
  shapePasts: readonly number[] | undefined,
  pasts: BufferRef | undefined,
  batch: number,
): { pasts: BufferRef; per_sequence: number } {
  if (shapePasts !== undefined) {
    throw new OpInputError(op, 'pasts', 'are read from buffers.pasts on the GPU, not the shape');
  }
  if (pasts) checkRef(gpu, op, 'pasts', pasts, batch);
  return {
    pasts: pasts ?? scratchBuffer(gpu, 'unused pasts', 16),
    per_sequence: pasts ? 1 : 0,
  };
}

/**
 * Records kCache[b, P_b + t] = kNew[b, t] and the same for v, for every b and t < T, P_b being
 * shape.past or buffers.pasts[b].
 */
export async function encodeKvCacheAppend(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    kNew: BufferRef;
    vNew: BufferRef;
    kCache: BufferRef;
    vCache: BufferRef;
    pasts?: BufferRef | undefined;
  },
  shape: KvAppendShape,
): Promise<void> {
  const op = 'kvCacheAppend';
  const cache = checkKvAppendShape(op, shape);
  const pasts = pastsBinding(gpu, op, shape.pasts, buffers.pasts, shape.batch);
  const count = shape.batch * shape.seq * shape.width;
  checkRef(gpu, op, 'kNew', buffers.kNew, count);
  checkRef(gpu, op, 'vNew', buffers.vNew, count);
  checkRef(gpu, op, 'kCache', buffers.kCache, cache);
  checkRef(gpu, op, 'vCache', buffers.vCache, cache);
  const pipeline = await gpu.pipelines.get(kvCacheAppendKernel, { WORKGROUP_SIZE: THREADS });
  batch.dispatch(kvCacheAppendKernel, {
    pipeline,
    buffers: {
      k_new: buffers.kNew,
      v_new: buffers.vNew,
      k_cache: buffers.kCache,
      v_cache: buffers.vCache,
      pasts: pasts.pasts,
    },
    uniforms: {
      count,
      seq: shape.seq,
      width: shape.width,
      capacity: shape.capacity,
      past: shape.past,
      per_sequence: pasts.per_sequence,
    },
    workgroups: invocationGrid(gpu, count, THREADS),
  });
}

/**
 * Convenience path with the CPU twin's semantics: kCache and vCache are updated in place (read
 * back from the GPU). One sync point.
 */
export async function kvCacheAppendGpu(
  gpu: GpuContext,
  kNew: Float32Array,
  vNew: Float32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  shape: KvAppendShape,
): Promise<void> {
  checkKvAppendInput('kvCacheAppend', kNew, kCache, shape);
  checkKvAppendInput('kvCacheAppend', vNew, vCache, shape);
  const pooled = new PooledBuffers(gpu);
  try {
    const { pasts, ...common } = shape;
    const buffers = {
      kNew: pooled.upload(kNew, 'kv append k'),
      vNew: pooled.upload(vNew, 'kv append v'),
      kCache: pooled.upload(kCache, 'k cache'),
      vCache: pooled.upload(vCache, 'v cache'),
      pasts: pasts && pooled.upload(Uint32Array.from(pasts), 'kv append pasts'),
    };
    const batch = gpu.beginBatch('kvCacheAppend');
    await encodeKvCacheAppend(gpu, batch, buffers, common);
    batch.submit();
    const [k, v] = await Promise.all([
      gpu.readF32(buffers.kCache, kCache.length),
      gpu.readF32(buffers.vCache, vCache.length),
    ]);
    kCache.set(k);
    vCache.set(v);
  } finally {
    pooled.release();
  }
}
