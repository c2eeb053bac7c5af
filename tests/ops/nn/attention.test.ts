import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  type AttentionShape,
  attentionBackward,
  attentionForward,
} from '../../../src/ops/nn/attention';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';
import { randomLogits } from '../../support/random';

describe('attentionForward (CPU reference)', () => {
  it('matches a hand-worked T = 2, NH = 1, hs = 2 case', () => {
    // C = hs = 2, scale = 1/√2. qkv rows are [q | k | v]:
    //   t = 0: q0 = (1, 0),        k0 = (0, 5), v0 = (4, 8)
    //   t = 1: q1 = (√2·ln 3, 0),  k1 = (1, 0), v1 = (0, −4)
    // Row 0 sees only u = 0: P[0] = (1, 0), out0 = v0 = (4, 8).
    // Row 1: s[1,0] = q1·k0/√2 = 0, s[1,1] = q1·k1/√2 = ln 3 → P[1] = (1, 3)/4 = (0.25, 0.75),
    //   out1 = 0.25·(4, 8) + 0.75·(0, −4) = (1, 2 − 3) = (1, −1).
    const r = Math.SQRT2 * Math.log(3);
    const qkv = new Float64Array([1, 0, 0, 5, 4, 8, r, 0, 1, 0, 0, -4]);
    const { out, probs } = attentionForward(qkv, { batch: 1, seq: 2, heads: 1, channels: 2 });
    const expectedProbs = [1, 0, 0.25, 0.75];
    const expectedOut = [4, 8, 1, -1];
    expectedProbs.forEach((p, i) => expect(probs[i]).toBeCloseTo(p, 12));
    expectedOut.forEach((o, i) => expect(out[i]).toBeCloseTo(o, 12));
    expect(out).toBeInstanceOf(Float64Array);
  });

  it('gives out = v for T = 1 (and the backward gives dv = dout, dq = dk = 0)', () => {
    const shape: AttentionShape = { batch: 3, seq: 1, heads: 2, channels: 6 };
    const qkv = randomLogits(3 * 18, 2, 7);
    const { out, probs } = attentionForward(qkv, shape);
    expect(out).toBeInstanceOf(Float32Array);
    expect(Array.from(probs)).toEqual([1, 1, 1, 1, 1, 1]);
    for (let b = 0; b < 3; b++) {
      expect(Array.from(out.slice(b * 6, b * 6 + 6))).toEqual(
        Array.from(qkv.slice(b * 18 + 12, b * 18 + 18)),
      );
    }
    // A softmax over one key is constant, so q and k get no gradient; v gets dout.
    const dout = randomLogits(3 * 6, 1, 8);
    const dqkv = attentionBackward(dout, qkv, probs, shape);
    for (let b = 0; b < 3; b++) {
      for (let c = 0; c < 12; c++) expect(dqkv[b * 18 + c]).toBe(0);
      for (let c = 0; c < 6; c++) expect(dqkv[b * 18 + 12 + c]).toBeCloseTo(dout[b * 6 + c]!, 7);
    }
  });

  it('property: causal rows are distributions, and positions > t never change out[t]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }), // batch
        fc.integer({ min: 1, max: 9 }), // seq
        fc.integer({ min: 1, max: 4 }), // heads
        fc.integer({ min: 1, max: 5 }), // hs
        fc.integer({ min: 0, max: 1e6 }), // seed
        (batch, seq, heads, hs, seed) => {
          const shape = { batch, seq, heads, channels: heads * hs };
          const C = heads * hs;
          const qkv = randomLogits(batch * seq * 3 * C, 3, seed);
          const { out, probs } = attentionForward(qkv, shape);
          for (let r = 0; r < batch * heads * seq; r++) {
            const t = r % seq;
            let sum = 0;
            for (let u = 0; u < seq; u++) {
              const p = probs[r * seq + u]!;
              if (u > t) expect(p).toBe(0);
              sum += p;
            }
            expect(Math.abs(sum - 1)).toBeLessThan(1e-6);
          }
          // Change k and v (not q) of every position > t; rows ≤ t keep their outputs bit for bit.
          const t = seed % seq;
          const changed = qkv.slice();
          for (let b = 0; b < batch; b++) {
            for (let u = t + 1; u < seq; u++) {
              for (let c = C; c < 3 * C; c++) changed[(b * seq + u) * 3 * C + c] = (seed % 7) - 3;
            }
          }
          const after = attentionForward(changed, shape).out;
          for (let b = 0; b < batch; b++) {
            const rows = [b * seq * C, (b * seq + t + 1) * C];
            expect(Array.from(after.slice(...rows))).toEqual(Array.from(out.slice(...rows)));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('attentionBackward (CPU reference)', () => {
  it.each([
    [{ batch: 2, seq: 5, heads: 2, channels: 8 }, 1],
    [{ batch: 1, seq: 7, heads: 3, channels: 9 }, 2],
    [{ batch: 2, seq: 3, heads: 1, channels: 4 }, 3],
  ])('matches central differences in float64 on %o', (shape, seed) => {
    const { batch: B, seq: T, channels: C } = shape;
    const qkv = randomF64(B * T * 3 * C, 1.5, seed);
    const w = probeWeights(B * T * C, seed + 100); // L = Σ w · out, so dout = w
    const { probs } = attentionForward(qkv, shape);
    const dqkv = attentionBackward(w, qkv, probs, shape);
    const result = gradCheck(qkv, dqkv, () => dot(w, attentionForward(qkv, shape).out), {
      maxEntries: qkv.length,
    });
    expect(result.checked).toBe(qkv.length);
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });
});

describe('attention input checks', () => {
  const ok: AttentionShape = { batch: 2, seq: 3, heads: 2, channels: 4 };
  const qkv = new Float32Array(2 * 3 * 12);
  const dout = new Float32Array(2 * 3 * 4);
  const probs = new Float32Array(2 * 2 * 3 * 3);

  it.each<[string, () => unknown, RegExp]>([
    ['batch 0', () => attentionForward(qkv, { ...ok, batch: 0 }), /batch must be an integer/],
    [
      'seq 0',
      () => attentionForward(qkv, { ...ok, seq: 0 }),
      /seq must be an integer in \[1, 256\]/,
    ],
    ['seq 257', () => attentionForward(qkv, { ...ok, seq: 257 }), /seq .* got 257/],
    ['heads 0', () => attentionForward(qkv, { ...ok, heads: 0 }), /heads .*\[1, 16\], got 0/],
    ['heads 17', () => attentionForward(qkv, { ...ok, heads: 17 }), /heads .*got 17/],
    ['heads 1.5', () => attentionForward(qkv, { ...ok, heads: 1.5 }), /heads .*got 1.5/],
    ['C not a multiple', () => attentionForward(qkv, { ...ok, channels: 5 }), /multiple of heads/],
    ['hs > 256', () => attentionForward(qkv, { ...ok, heads: 1, channels: 257 }), /channels .*256/],
    ['qkv length', () => attentionForward(qkv.subarray(1), ok), /qkv must have B × T × 3C/],
    ['dout length', () => attentionBackward(qkv, qkv, probs, ok), /dout must have .* = 24/],
    ['bw qkv length', () => attentionBackward(dout, dout, probs, ok), /qkv must have .* = 72/],
    ['probs length', () => attentionBackward(dout, qkv, dout, ok), /probs must have .* = 36/],
  ])('rejects %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});
