import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { attentionForward } from '../../../src/ops/nn/attention';
import { type DecodeShape, attentionDecode } from '../../../src/ops/nn/attention-decode';
import type { Floats } from '../../../src/ops/nn/floats';
import { randomF64 } from '../../support/gradcheck';
import { randomLogits } from '../../support/random';

/** Feeds positions 0 … T − 1 of qkv (B, T, 3C) through the decode op; returns out (B, T, C). */
function decodeAll<T extends Floats>(qkv: T, shape: DecodeShape, seq: number, make: () => T): T {
  const { batch: B, heads: NH, channels: C, maxSeq: S } = shape;
  const kCache = make();
  const vCache = make();
  expect(kCache.length).toBe(B * NH * S * (C / NH));
  const out = qkv.slice(0, B * seq * C) as T;
  for (let pos = 0; pos < seq; pos++) {
    const step = qkv.slice(0, B * 3 * C) as T;
    for (let b = 0; b < B; b++) {
      step.set(qkv.subarray((b * seq + pos) * 3 * C, (b * seq + pos + 1) * 3 * C), b * 3 * C);
    }
    const row = attentionDecode(step, kCache, vCache, pos, shape);
    for (let b = 0; b < B; b++) out.set(row.subarray(b * C, (b + 1) * C), (b * seq + pos) * C);
  }
  return out;
}

describe('attentionDecode (CPU reference)', () => {
  it('reproduces attentionForward row by row, exactly (float32 and float64)', () => {
    for (const [B, T, NH, C, S] of [
      [2, 7, 3, 12, 9],
      [1, 1, 1, 4, 1],
      [3, 5, 2, 2, 5],
    ] as const) {
      const shape = { batch: B, heads: NH, channels: C, maxSeq: S };
      const hs = C / NH;
      const f32 = randomLogits(B * T * 3 * C, 2, B * 100 + T);
      const out32 = decodeAll(f32, shape, T, () => new Float32Array(B * NH * S * hs));
      const fwd32 = attentionForward(f32, { batch: B, seq: T, heads: NH, channels: C }).out;
      expect(Array.from(out32)).toEqual(Array.from(fwd32));
      const f64 = randomF64(B * T * 3 * C, 2, T);
      const out64 = decodeAll(f64, shape, T, () => new Float64Array(B * NH * S * hs));
      const fwd64 = attentionForward(f64, { batch: B, seq: T, heads: NH, channels: C }).out;
      expect(Array.from(out64)).toEqual(Array.from(fwd64));
    }
  });

  it('writes exactly the cache entries of pos and returns out = v at pos 0', () => {
    // B = 1, NH = 2, C = 4 (hs = 2), maxSeq = 3. qkvStep = [q (4) | k (4) | v (4)].
    const step = new Float32Array([1, 2, 3, 4, 10, 11, 12, 13, 20, 21, 22, 23]);
    const kCache = new Float32Array(2 * 3 * 2).fill(-1);
    const vCache = new Float32Array(2 * 3 * 2).fill(-1);
    const shape = { batch: 1, heads: 2, channels: 4, maxSeq: 3 };
    const out = attentionDecode(step, kCache, vCache, 0, shape);
    // Cache (NH, S, hs): head 0 gets k (10, 11) at pos 0, head 1 gets (12, 13); the rest stays −1.
    expect(Array.from(kCache)).toEqual([10, 11, -1, -1, -1, -1, 12, 13, -1, -1, -1, -1]);
    expect(Array.from(vCache)).toEqual([20, 21, -1, -1, -1, -1, 22, 23, -1, -1, -1, -1]);
    // One visible position: softmax weight 1, so out = v.
    expect(Array.from(out)).toEqual([20, 21, 22, 23]);
  });

  it('attends over cached positions: a hand-worked pos = 1 step', () => {
    // B = 1, NH = 1, C = hs = 1, scale = 1. Cache holds k0 = 0, v0 = 4 at pos 0.
    // Step at pos 1: q = ln 3, k1 = 1, v1 = 8 → s = (0, ln 3), P = (1/4, 3/4), out = 1 + 6 = 7.
    const kCache = new Float64Array([0, 0]);
    const vCache = new Float64Array([4, 0]);
    const out = attentionDecode(new Float64Array([Math.log(3), 1, 8]), kCache, vCache, 1, {
      batch: 1,
      heads: 1,
      channels: 1,
      maxSeq: 2,
    });
    expect(out[0]).toBeCloseTo(7, 12);
    expect(Array.from(kCache)).toEqual([0, 1]);
  });

  it.each<[string, Partial<DecodeShape>, number, RegExp]>([
    ['pos = maxSeq', {}, 4, /pos must be an integer in \[0, 3\], got 4/],
    ['pos < 0', {}, -1, /pos .*got -1/],
    ['maxSeq 257', { maxSeq: 257 }, 0, /maxSeq must be an integer in \[1, 256\]/],
    ['heads 17', { heads: 17 }, 0, /heads .*\[1, 16\]/],
    ['C not a multiple', { channels: 5 }, 0, /multiple of heads/],
    ['batch 0', { batch: 0 }, 0, /batch/],
  ])('rejects %s', (_, change, pos, message) => {
    const shape = { batch: 2, heads: 2, channels: 4, maxSeq: 4, ...change };
    const call = () =>
      attentionDecode(new Float32Array(24), new Float32Array(32), new Float32Array(32), pos, shape);
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });

  it('rejects inputs of the wrong length, naming the tensor', () => {
    const shape = { batch: 2, heads: 2, channels: 4, maxSeq: 4 };
    const [step, k, v] = [new Float32Array(24), new Float32Array(32), new Float32Array(32)];
    expect(() => attentionDecode(step.subarray(1), k, v, 0, shape)).toThrow(/qkvStep .* = 24/);
    expect(() => attentionDecode(step, k.subarray(1), v, 0, shape)).toThrow(/kCache .* = 32/);
    expect(() => attentionDecode(step, k, new Float32Array(33), 0, shape)).toThrow(/vCache/);
  });
});
