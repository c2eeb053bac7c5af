import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { valueLoss } from '../../src/ops/value-loss';
import { randomLogits, seededRandom } from '../support/random';

function expectAll(actual: Float32Array, expected: number[], what: string): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `${what}[${i}]`).toBeCloseTo(v, 7));
}

// Hand-worked batch, clip range 0.25 (binary fractions, so f32 holds every input exactly).
// Row 0 (all unmasked) and row 1 (last two masked); per token, vc = old + clamp(v − old, ±0.25):
//   a: old 1, v 1.125, R 2:  step 0.125 inside → vc = v; l1 = l2 = 0.765625; ∂ℓ = 2(v − R) = −1.75
//   b: old 1, v 1.5,   R 2:  vc 1.25; l1 = 0.25, l2 = 0.5625 → ℓ = 0.5625 CLIPPED, ∂ℓ = 0
//   c: old 1, v 1.5,   R 0:  vc 1.25; l1 = 2.25, l2 = 1.5625 → ℓ = 2.25, ∂ℓ = 3
//   d: old 1, v 0.5,   R 2:  vc 0.75; l1 = 2.25, l2 = 1.5625 → ℓ = 2.25, ∂ℓ = −3
//   e: old 0, v −1,    R 1:  vc −0.25; l1 = 4, l2 = 1.5625 → ℓ = 4, ∂ℓ = −4
//   g: old 0, v −0.5,  R −2: vc −0.25; l1 = 2.25, l2 = 3.0625 → ℓ = 3.0625 CLIPPED, ∂ℓ = 0
//   masked: v 100, old −100, R 7 (must not matter)
const rows = 2;
const cols = 4;
const vpreds = new Float32Array([1.125, 1.5, 1.5, 0.5, -1, -0.5, 100, 100]);
const oldValues = new Float32Array([1, 1, 1, 1, 0, 0, -100, -100]);
const returns = new Float32Array([2, 2, 0, 2, 1, -2, 7, 7]);
const mask = new Float32Array([1, 1, 1, 1, 1, 1, 0, 0]);

describe('valueLoss (CPU reference)', () => {
  it('token-mean, clipped: Σℓ = 12.890625 over 6 tokens, loss ½·2.1484375, clipfrac 2/6', () => {
    const out = valueLoss(vpreds, oldValues, returns, mask, rows, cols, {
      cliprangeValue: 0.25,
      aggregation: { mode: 'token-mean' },
    });
    expectAll(out.tokenLoss, [0.765625, 0.5625, 2.25, 2.25, 4, 3.0625, 0, 0], 'tokenLoss');
    expect(out.loss).toBeCloseTo(1.07421875, 12);
    expect(out.clipfrac).toBeCloseTo(1 / 3, 12);
    expect(out.tokens).toBe(6);
    // ∂loss/∂v = ½ · (1/6) · ∂ℓ = ∂ℓ / 12.
    expectAll(out.gradVpreds, [-1.75 / 12, 0, 0.25, -0.25, -4 / 12, 0, 0, 0], 'grad');
  });

  it('seq-mean-token-mean: rows 5.828125/4 and 7.0625/2 → ½ · 2.494140625', () => {
    const out = valueLoss(vpreds, oldValues, returns, mask, rows, cols, {
      cliprangeValue: 0.25,
      aggregation: { mode: 'seq-mean-token-mean' },
    });
    expect(out.loss).toBeCloseTo(1.2470703125, 12);
    // Row 0 weight ½ · 1/(2·4) = 1/16, row 1 weight ½ · 1/(2·2) = 1/8.
    expectAll(out.gradVpreds, [-1.75 / 16, 0, 3 / 16, -3 / 16, -4 / 8, 0, 0, 0], 'grad');
    expect(out.clipfrac).toBeCloseTo(1 / 3, 12);
  });

  it('cliprangeValue null: ℓ = l1 everywhere, clipfrac 0', () => {
    // l1 = [0.765625, 0.25, 2.25, 2.25, 4, 2.25]: Σ 11.765625 / 6 = 1.9609375 → loss 0.98046875.
    const out = valueLoss(vpreds, oldValues, returns, mask, rows, cols, { cliprangeValue: null });
    expectAll(out.tokenLoss, [0.765625, 0.25, 2.25, 2.25, 4, 2.25, 0, 0], 'tokenLoss');
    expect(out.loss).toBeCloseTo(0.98046875, 12);
    expect(out.clipfrac).toBe(0);
    // ∂ℓ = 2(v − R) = [−1.75, −1, 3, −3, −4, 3], over 12.
    expectAll(out.gradVpreds, [-1.75 / 12, -1 / 12, 0.25, -0.25, -4 / 12, 0.25, 0, 0], 'grad');
  });

  it('uses per-flavor clip ranges: verl 0.5, trl 0.2, openrlhf 0.5', () => {
    // One token: old 0, v 0.4, R 1. l1 = 0.36. Clip 0.2: vc = 0.2, l2 = 0.64 → clipped;
    // clip 0.5: vc = v, unclipped.
    const run = (flavor: 'verl' | 'trl' | 'openrlhf') =>
      valueLoss(
        new Float32Array([0.4]),
        new Float32Array([0]),
        new Float32Array([1]),
        new Float32Array([1]),
        1,
        1,
        { flavor },
      );
    expect(run('trl').clipfrac).toBe(1);
    expect(run('trl').loss).toBeCloseTo(0.32, 6);
    expect(run('verl').clipfrac).toBe(0);
    expect(run('verl').loss).toBeCloseTo(0.18, 6);
    expect(run('openrlhf').loss).toBeCloseTo(0.18, 6);
  });

  it('an all-zero mask gives loss 0, clipfrac 0 and zero gradients, not NaN', () => {
    for (const mode of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum'] as const) {
      const out = valueLoss(vpreds, oldValues, returns, new Float32Array(8), rows, cols, {
        aggregation: { mode },
      });
      expect(out.loss).toBe(0);
      expect(out.clipfrac).toBe(0);
      expect(out.emptyMask).toBe(true);
      expect(Array.from(out.gradVpreds)).toEqual(new Array(8).fill(0));
    }
  });

  it('property: pessimism — ℓ ≥ l1, and the clipped value never gives a lower loss', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.01, max: 2, noNaN: true }),
        (seed, clip) => {
          const n = 16;
          const v = randomLogits(n, 3, seed);
          const old = randomLogits(n, 3, seed + 1);
          const ret = randomLogits(n, 3, seed + 2);
          const out = valueLoss(v, old, ret, new Float32Array(n).fill(1), 1, n, {
            cliprangeValue: clip,
          });
          for (let i = 0; i < n; i++) {
            const l1 = Math.fround((v[i]! - ret[i]!) ** 2);
            expect(out.tokenLoss[i]!).toBeGreaterThanOrEqual(l1);
          }
          expect(out.clipfrac).toBeGreaterThanOrEqual(0);
          expect(out.clipfrac).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: masked positions never change the loss, clipfrac or gradients', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'),
        (r, c, seed, mode) => {
          const n = r * c;
          const next = seededRandom(seed);
          const m = new Float32Array(n).map(() => (next() < 0.5 ? 1 : 0));
          const v = randomLogits(n, 2, seed + 1);
          const old = randomLogits(n, 2, seed + 2);
          const ret = randomLogits(n, 2, seed + 3);
          const options = { cliprangeValue: 0.3, aggregation: { mode } } as const;
          const a = valueLoss(v, old, ret, m, r, c, options);
          const noise = (x: Float32Array) => x.map((y, i) => (m[i] ? y : 1e4 * next()));
          const b = valueLoss(noise(v), noise(old), noise(ret), m, r, c, options);
          expect(b.loss).toBe(a.loss);
          expect(b.clipfrac).toBe(a.clipfrac);
          expect(Array.from(b.gradVpreds)).toEqual(Array.from(a.gradVpreds));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('gradient check: ∂loss/∂vpreds matches central finite differences away from kinks', () => {
    const r = 3;
    const c = 5;
    const v = randomLogits(r * c, 2, 21);
    const old = randomLogits(r * c, 2, 22);
    const ret = randomLogits(r * c, 2, 23);
    const m = new Float32Array([1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1]);
    for (const mode of ['token-mean', 'seq-mean-token-mean', 'dr-grpo'] as const) {
      for (const cliprangeValue of [0.3, null]) {
        const options = { cliprangeValue, aggregation: { mode } };
        const { gradVpreds } = valueLoss(v, old, ret, m, r, c, options);
        for (let i = 0; i < v.length; i++) {
          const plus = v.slice();
          const minus = v.slice();
          plus[i] = v[i]! + 1e-3;
          minus[i] = v[i]! - 1e-3;
          const step = plus[i]! - minus[i]!;
          const lossPlus = valueLoss(plus, old, ret, m, r, c, options).loss;
          const lossMinus = valueLoss(minus, old, ret, m, r, c, options).loss;
          // A kink (clip bound, or l1 = l2) inside ±h would make the difference meaningless.
          const step1 = Math.abs(v[i]! - old[i]!);
          if (cliprangeValue !== null && Math.abs(step1 - cliprangeValue) < 2e-3) continue;
          const fd = (lossPlus - lossMinus) / step;
          expect(Math.abs(fd - gradVpreds[i]!), `${mode} ${cliprangeValue} ${i}`).toBeLessThan(
            1e-4,
          );
        }
      }
    }
  });

  it.each([
    [
      'vpreds',
      () =>
        valueLoss(
          new Float32Array([NaN]),
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array([1]),
          1,
          1,
        ),
    ],
    [
      'oldValues',
      () =>
        valueLoss(
          new Float32Array(2),
          new Float32Array(3),
          new Float32Array(2),
          new Float32Array(2),
          1,
          2,
        ),
    ],
    [
      'returns',
      () =>
        valueLoss(
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array([Infinity]),
          new Float32Array([1]),
          1,
          1,
        ),
    ],
    [
      'mask',
      () =>
        valueLoss(
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array([2]),
          1,
          1,
        ),
    ],
    [
      'cliprangeValue',
      () =>
        valueLoss(
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array([1]),
          1,
          1,
          { cliprangeValue: 0 },
        ),
    ],
    [
      'mode',
      () =>
        valueLoss(
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array(1),
          new Float32Array([1]),
          1,
          1,
          { aggregation: { mode: 'sum' as 'token-mean' } },
        ),
    ],
  ])('rejects bad %s with an OpInputError naming it', (field, call) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(new RegExp(`valueLoss: ${field} `));
  });
});
