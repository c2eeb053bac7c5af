/**
 * Appending new key/value rows to a KV cache of fixed capacity, as a batched generator does after
 * each step: the CPU twin of kernels/nn/kv_cache_append.wgsl (src/gpu/kernels/nn/kv-cache.ts). The
 * cache keeps its capacity Smax so that its buffers are allocated once per generation; attention
 * reads rows 0 … past + T − 1 of it (src/ops/nn/attention-gqa.ts with `past`, its GPU kernel with
 * `kvCapacity`).
 *
 * Shapes: B = batch, T = new rows per sequence, W = width (NKV·hs), Smax = capacity.
 *   rows:  (B, T, W)      cache: (B, Smax, W)
 *   cache[b, P_b + t, c] = rows[b, t, c]   for t < T, P_b + T ≤ Smax
 * P_b is `past` for every sequence, or `pasts[b]` when given: prompts of different lengths
 * decoding in one batch, each sequence's next row at its own length. Sequences that stopped early
 * keep being written (their rows are ignored by whoever reads them).
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength } from '../validate';
import type { Floats } from './floats';

export interface KvAppendShape {
  /** B, ≥ 1. */
  batch: number;
  /** T, new rows per sequence, ≥ 1. */
  seq: number;
  /** W = NKV·hs, floats per row, ≥ 1. */
  width: number;
  /** Smax, rows per sequence the cache holds, ≥ seq. */
  capacity: number;
  /** First row written, 0 … capacity − seq; with `pasts`, the largest of them. */
  past: number;
  /** Each sequence's first row written (B values, each 0 … past); none: `past` for all. */
  pasts?: readonly number[] | undefined;
}

const MAX_ELEMENTS = 2 ** 31 - 1;

/** Shape checks shared with the GPU wrapper; returns the cache's element count B·Smax·W. */
export function checkKvAppendShape(op: string, shape: KvAppendShape): number {
  checkInt(op, 'batch', shape.batch, 1, MAX_ELEMENTS);
  checkInt(op, 'width', shape.width, 1, MAX_ELEMENTS);
  checkInt(op, 'capacity', shape.capacity, 1, MAX_ELEMENTS);
  checkInt(op, 'seq', shape.seq, 1, shape.capacity);
  checkInt(op, 'past', shape.past, 0, shape.capacity - shape.seq);
  const elements = shape.batch * shape.capacity * shape.width;
  checkInt(op, 'batch × capacity × width', elements, 1, MAX_ELEMENTS);
  if (shape.pasts !== undefined) checkPasts(op, shape.pasts, shape.batch, shape.past);
  return elements;
}

/** Per-sequence pasts: B whole numbers in [0, past] (`past` bounds every sequence's). */
export function checkPasts(
  op: string,
  pasts: readonly number[],
  batch: number,
  past: number,
): void {
  if (pasts.length !== batch) {
    throw new OpInputError(
      op,
      'pasts',
      `must have one per sequence, B = ${batch}, got ${pasts.length}`,
    );
  }
  pasts.forEach((value, b) => checkInt(op, `pasts[${b}]`, value, 0, past));
}

/** Lengths of both arrays; shared with the GPU wrapper's convenience path. */
export function checkKvAppendInput(
  op: string,
  rows: Floats,
  cache: Floats,
  shape: KvAppendShape,
): void {
  const elements = checkKvAppendShape(op, shape);
  checkLength(op, 'rows', rows, shape.batch * shape.seq * shape.width, 'B × T × width');
  checkLength(op, 'cache', cache, elements, 'B × capacity × width');
}

/** Writes rows into cache at row `past` (or `pasts[b]`) of every sequence b, in place. */
export function kvCacheAppend(rows: Floats, cache: Floats, shape: KvAppendShape): void {
  checkKvAppendInput('kvCacheAppend', rows, cache, shape);
  const { batch: B, seq: T, width: W, capacity, past, pasts } = shape;
  for (let b = 0; b < B; b++) {
    const from = b * T * W;
    cache.set(rows.subarray(from, from + T * W), (b * capacity + (pasts?.[b] ?? past)) * W);
  }
}
