import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { attentionBackward, attentionForward } from '../../../src/ops/nn/attention';
import {
  gqaAttentionBackward,
  gqaAttentionForward,
  type GqaShape,
} from '../../../src/ops/nn/attention-gqa';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

/** k or v (B, S, NKV·hs) with each kv head repeated G times: (B, S, NH·hs) (Hugging Face's repeat_kv). */
function repeatKv(x: Float64Array, rows: number, kvHeads: number, group: number, hs: number) {
  const out = new Float64Array(rows * kvHeads * group * hs);
  for (let r = 0; r < rows; r++) {
    for (let h = 0; h < kvHeads * group; h++) {
      const from = (r * kvHeads + Math.floor(h / group)) * hs;
      out.set(x.subarray(from, from + hs), (r * kvHeads * group + h) * hs);
    }
  }
  return out;
}

/** q, k, v of equal width C packed as the tiny GPT's qkv (B·T, 3C) rows [q | k | v]. */
function packQkv(q: Float64Array, k: Float64Array, v: Float64Array, rows: number, C: number) {
  const qkv = new Float64Array(rows * 3 * C);
  for (let r = 0; r < rows; r++) {
    qkv.set(q.subarray(r * C, (r + 1) * C), r * 3 * C);
    qkv.set(k.subarray(r * C, (r + 1) * C), r * 3 * C + C);
    qkv.set(v.subarray(r * C, (r + 1) * C), r * 3 * C + 2 * C);
  }
  return qkv;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('gqaAttentionForward (CPU reference)', () => {
  it('matches a hand-worked case: 2 query heads share 1 kv head, T = 2, hs = 2', () => {
    // scale = 1/√2. k0 = (0, 5), k1 = (1, 0); v0 = (4, 8), v1 = (0, −4); r = √2·ln 3.
    // Head 0: q0 = (1, 0), q1 = (r, 0). Row 0 sees u = 0 only: out = v0 = (4, 8).
    //   Row 1: s = (0, ln 3) → P = (0.25, 0.75), out = 0.25·(4, 8) + 0.75·(0, −4) = (1, −1).
    // Head 1: q0 = (0, 7), q1 = (0, r/5). Row 0: out = v0. Row 1: s = (q1·k0, q1·k1)/√2 =
    //   (r, 0)/√2 = (ln 3, 0) → P = (0.75, 0.25), out = 0.75·(4, 8) + 0.25·(0, −4) = (3, 5).
    const r = Math.SQRT2 * Math.log(3);
    const q = new Float64Array([1, 0, 0, 7, r, 0, 0, r / 5]); // (T, NH·hs): rows t, heads 0 | 1
    const k = new Float64Array([0, 5, 1, 0]);
    const v = new Float64Array([4, 8, 0, -4]);
    const shape: GqaShape = { batch: 1, seq: 2, heads: 2, kvHeads: 1, headSize: 2 };
    const { out, probs } = gqaAttentionForward(q, k, v, shape);
    [4, 8, 4, 8, 1, -1, 3, 5].forEach((o, i) => expect(out[i]).toBeCloseTo(o, 12));
    // probs (B, NH, T, S): head 0 rows (1, 0), (0.25, 0.75); head 1 rows (1, 0), (0.75, 0.25).
    [1, 0, 0.25, 0.75, 1, 0, 0.75, 0.25].forEach((p, i) => expect(probs[i]).toBeCloseTo(p, 12));
  });

  it('with kvHeads = heads and hs = C/NH equals the tiny GPT attention op, forward and backward', () => {
    const B = 2;
    const T = 5;
    const NH = 3;
    const hs = 4;
    const C = NH * hs;
    const q = randomF64(B * T * C, 1.5, 1);
    const k = randomF64(B * T * C, 1.5, 2);
    const v = randomF64(B * T * C, 1.5, 3);
    const dout = probeWeights(B * T * C, 4);
    const shape: GqaShape = { batch: B, seq: T, heads: NH, kvHeads: NH, headSize: hs };
    const mine = gqaAttentionForward(q, k, v, shape);
    const qkv = packQkv(q, k, v, B * T, C);
    const gptShape = { batch: B, seq: T, heads: NH, channels: C };
    const theirs = attentionForward(qkv, gptShape, 'loops');
    expect(maxAbsDiff(mine.out, theirs.out)).toBeLessThan(1e-14);
    expect(maxAbsDiff(mine.probs, theirs.probs)).toBeLessThan(1e-15);
    const grads = gqaAttentionBackward(dout, q, k, v, mine.probs, shape);
    const dqkv = attentionBackward(dout, qkv, theirs.probs, gptShape, 'loops');
    expect(maxAbsDiff(packQkv(grads.dq, grads.dk, grads.dv, B * T, C), dqkv)).toBeLessThan(1e-14);
  });

  it('equals attention over k and v repeated per group (repeat_kv); dk, dv sum the group', () => {
    const B = 2;
    const T = 4;
    const NH = 6;
    const NKV = 2;
    const G = NH / NKV;
    const hs = 3;
    const q = randomF64(B * T * NH * hs, 1.5, 5);
    const k = randomF64(B * T * NKV * hs, 1.5, 6);
    const v = randomF64(B * T * NKV * hs, 1.5, 7);
    const dout = probeWeights(B * T * NH * hs, 8);
    const gqa: GqaShape = { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs };
    const mha: GqaShape = { ...gqa, kvHeads: NH };
    const kRep = repeatKv(k, B * T, NKV, G, hs);
    const vRep = repeatKv(v, B * T, NKV, G, hs);
    const grouped = gqaAttentionForward(q, k, v, gqa);
    const full = gqaAttentionForward(q, kRep, vRep, mha);
    expect(maxAbsDiff(grouped.out, full.out)).toBeLessThan(1e-14);
    expect(maxAbsDiff(grouped.probs, full.probs)).toBeLessThan(1e-15);
    const dg = gqaAttentionBackward(dout, q, k, v, grouped.probs, gqa);
    const df = gqaAttentionBackward(dout, q, kRep, vRep, full.probs, mha);
    expect(maxAbsDiff(dg.dq, df.dq)).toBeLessThan(1e-14);
    // dk of kv head j = Σ over its G query heads' copies.
    const sumGroup = (x: Float64Array) => {
      const out = new Float64Array(B * T * NKV * hs);
      for (let r = 0; r < B * T; r++) {
        for (let h = 0; h < NH; h++) {
          for (let i = 0; i < hs; i++) {
            out[(r * NKV + Math.floor(h / G)) * hs + i]! += x[(r * NH + h) * hs + i]!;
          }
        }
      }
      return out;
    };
    expect(maxAbsDiff(dg.dk, sumGroup(df.dk))).toBeLessThan(1e-13);
    expect(maxAbsDiff(dg.dv, sumGroup(df.dv))).toBeLessThan(1e-13);
  });

  it('with past = P, the last rows over cached keys equal those rows of the full pass', () => {
    const B = 2;
    const S = 7;
    const P = 4;
    const NH = 4;
    const NKV = 2;
    const hs = 2;
    const q = randomF64(B * S * NH * hs, 1.5, 9);
    const k = randomF64(B * S * NKV * hs, 1.5, 10);
    const v = randomF64(B * S * NKV * hs, 1.5, 11);
    const full = gqaAttentionForward(q, k, v, {
      batch: B,
      seq: S,
      heads: NH,
      kvHeads: NKV,
      headSize: hs,
    });
    const T = S - P;
    const qLast = new Float64Array(B * T * NH * hs);
    for (let b = 0; b < B; b++) {
      qLast.set(q.subarray((b * S + P) * NH * hs, (b + 1) * S * NH * hs), b * T * NH * hs);
    }
    const step = gqaAttentionForward(qLast, k, v, {
      batch: B,
      seq: T,
      past: P,
      heads: NH,
      kvHeads: NKV,
      headSize: hs,
    });
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const row = (b * S + P + t) * NH * hs;
        const mine = step.out.subarray((b * T + t) * NH * hs, (b * T + t + 1) * NH * hs);
        expect(maxAbsDiff(mine, full.out.subarray(row, row + NH * hs))).toBeLessThan(1e-15);
        for (let h = 0; h < NH; h++) {
          const fullRow = ((b * NH + h) * S + P + t) * S;
          const stepRow = ((b * NH + h) * T + t) * S;
          expect(
            maxAbsDiff(
              step.probs.subarray(stepRow, stepRow + S),
              full.probs.subarray(fullRow, fullRow + S),
            ),
          ).toBeLessThan(1e-15);
        }
      }
    }
  });

  it('with pasts, each sequence equals a batch of one at its own past; later keys unread', () => {
    // B = 3 sequences with pasts 2, 6, 0 in k, v of S = 6 + T rows each (P = 6, the largest).
    const pasts = [2, 6, 0];
    const [T, P, NH, NKV, hs] = [2, 6, 4, 2, 3];
    const S = P + T;
    const heads = { heads: NH, kvHeads: NKV, headSize: hs };
    const q = randomF64(3 * T * NH * hs, 1.5, 21);
    const k = randomF64(3 * S * NKV * hs, 1.5, 22);
    const v = randomF64(3 * S * NKV * hs, 1.5, 23);
    const mixed = gqaAttentionForward(q, k, v, { batch: 3, seq: T, past: P, pasts, ...heads });
    const kvRows = NKV * hs;
    pasts.forEach((past, b) => {
      const own = past + T;
      const one = gqaAttentionForward(
        q.slice(b * T * NH * hs, (b + 1) * T * NH * hs),
        k.slice(b * S * kvRows, (b * S + own) * kvRows),
        v.slice(b * S * kvRows, (b * S + own) * kvRows),
        { batch: 1, seq: T, past, ...heads },
      );
      const mine = mixed.out.subarray(b * T * NH * hs, (b + 1) * T * NH * hs);
      expect(maxAbsDiff(mine, one.out)).toBe(0);
      for (let r = 0; r < NH * T; r++) {
        const row = mixed.probs.subarray((b * NH * T + r) * S, (b * NH * T + r + 1) * S);
        expect(maxAbsDiff(row.subarray(0, own), one.probs.subarray(r * own, (r + 1) * own))).toBe(
          0,
        );
        expect(Array.from(row.subarray(own))).toEqual(new Array(S - own).fill(0));
      }
    });
    // A key after a sequence's own rows changes nothing of it (a cache row not yet written).
    const kChanged = k.slice();
    kChanged[(0 * S + 2 + T) * kvRows] = 1e6;
    const again = gqaAttentionForward(q, kChanged, v, {
      batch: 3,
      seq: T,
      past: P,
      pasts,
      ...heads,
    });
    expect(maxAbsDiff(again.out, mixed.out)).toBe(0);
  });

  it('keeps f32 in, f32 out', () => {
    const { out, probs } = gqaAttentionForward(
      new Float32Array(8),
      new Float32Array(4),
      new Float32Array(4),
      { batch: 1, seq: 2, heads: 2, kvHeads: 1, headSize: 2 },
    );
    expect(out).toBeInstanceOf(Float32Array);
    expect(Array.from(probs)).toEqual([1, 0, 0.5, 0.5, 1, 0, 0.5, 0.5]);
  });
});

describe('gqaAttentionBackward (CPU reference)', () => {
  // G = 2, odd head size, two cached keys: every index path of the backward is exercised.
  const shape: GqaShape = { batch: 2, seq: 3, past: 2, heads: 4, kvHeads: 2, headSize: 3 };
  const S = 5;
  const q = randomF64(2 * 3 * 4 * 3, 1.5, 31);
  const k = randomF64(2 * S * 2 * 3, 1.5, 32);
  const v = randomF64(2 * S * 2 * 3, 1.5, 33);
  const probe = probeWeights(q.length, 34);
  const loss = () => dot(probe, gqaAttentionForward(q, k, v, shape).out);
  const { probs } = gqaAttentionForward(q, k, v, shape);
  const grads = gqaAttentionBackward(probe, q, k, v, probs, shape);

  it.each([
    ['dq', q, () => grads.dq],
    ['dk', k, () => grads.dk],
    ['dv', v, () => grads.dv],
  ] as const)('%s matches central differences in float64', (_name, param, analytic) => {
    const result = gradCheck(param, analytic(), loss, { maxEntries: 80 });
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });
});

describe('gqaAttention input checks', () => {
  const f = (n: number) => new Float32Array(n);
  const ok: GqaShape = { batch: 1, seq: 2, heads: 4, kvHeads: 2, headSize: 2 };
  it.each([
    [
      'kvHeads not dividing heads',
      () => gqaAttentionForward(f(16), f(6), f(6), { ...ok, kvHeads: 3 }),
      /gqaAttentionForward: kvHeads must divide heads \(4\) for grouped-query attention, got 3/,
    ],
    [
      'kvHeads above heads',
      () => gqaAttentionForward(f(16), f(8), f(8), { ...ok, kvHeads: 8 }),
      /kvHeads must be an integer in \[1, 4\], got 8/,
    ],
    [
      'headSize',
      () => gqaAttentionForward(f(16), f(8), f(8), { ...ok, headSize: 0 }),
      /headSize must be an integer in \[1, 1024\], got 0/,
    ],
    [
      'past',
      () => gqaAttentionForward(f(16), f(8), f(8), { ...ok, past: -1 }),
      /past must be an integer in \[0, /,
    ],
    [
      'a sequence past the shared past',
      () => gqaAttentionForward(f(16), f(12), f(12), { ...ok, past: 1, pasts: [2] }),
      /pasts\[0\] must be an integer in \[0, 1\], got 2/,
    ],
    [
      'pasts in the backward',
      () => gqaAttentionBackward(f(16), f(16), f(8), f(8), f(16), { ...ok, pasts: [0] }),
      /gqaAttentionBackward: pasts are for decoding/,
    ],
    [
      'q length',
      () => gqaAttentionForward(f(15), f(8), f(8), ok),
      /q must have B × T × NH·hs = 16 elements, got 15/,
    ],
    [
      'k length with past',
      () => gqaAttentionForward(f(16), f(8), f(12), { ...ok, past: 1 }),
      /k must have B × \(past \+ T\) × NKV·hs = 12 elements, got 8/,
    ],
    [
      'backward probs length',
      () => gqaAttentionBackward(f(16), f(16), f(8), f(8), f(15), ok),
      /gqaAttentionBackward: probs must have B × NH × T × \(past \+ T\) = 16 elements, got 15/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
