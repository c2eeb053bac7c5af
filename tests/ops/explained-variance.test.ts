import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { explainedVariance } from '../../src/ops/explained-variance';
import { randomLogits, seededRandom } from '../support/random';

const plain = { correction: 0, epsilon: 0 } as const; // CleanRL / numpy

describe('explainedVariance (CPU reference)', () => {
  // R = [1, 2, 3, 4], V = [1, 2, 2, 5] → D = R − V = [0, 0, 1, −1].
  // mean R = 2.5, Σ(R − 2.5)² = 2.25 + 0.25 + 0.25 + 2.25 = 5; mean D = 0, Σ D² = 2.
  const returns = new Float32Array([1, 2, 3, 4]);
  const values = new Float32Array([1, 2, 2, 5]);
  const mask = new Float32Array([1, 1, 1, 1]);

  it('plain (CleanRL): Var R = 5/4, Var D = 2/4 → ev = 1 − 0.4 = 0.6', () => {
    const out = explainedVariance(returns, values, mask, 2, 2, plain);
    expect(out.value).toBeCloseTo(0.6, 12);
    expect(out.defined).toBe(true);
    expect(out.varReturns).toBeCloseTo(1.25, 12);
    expect(out.varResidual).toBeCloseTo(0.5, 12);
    expect(out.tokens).toBe(4);
  });

  it('verl: unbiased variances 5/3 and 2/3, + 1e-5 → ev = 1 − 2/(5 + 3e-5) = 0.6000023999856', () => {
    const out = explainedVariance(returns, values, mask, 2, 2, { flavor: 'verl' });
    expect(out.value).toBeCloseTo(0.6000023999856, 12);
    expect(out.varReturns).toBeCloseTo(5 / 3, 12);
    expect(out.varResidual).toBeCloseTo(2 / 3, 12);
  });

  it('is 1 for a perfect prediction and 0 for predicting the mean', () => {
    const r = randomLogits(24, 5, 3);
    let mean = 0;
    for (const x of r) mean += x / r.length;
    const m = new Float32Array(24).fill(1);
    expect(explainedVariance(r, r, m, 4, 6, plain).value).toBe(1);
    expect(explainedVariance(r, r, m, 4, 6, { flavor: 'verl' }).value).toBe(1);
    // V = mean R: D = R − mean, so Var D = Var R up to the f32 rounding of the mean.
    const atMean = new Float32Array(24).fill(mean);
    expect(explainedVariance(r, atMean, m, 4, 6, plain).value).toBeCloseTo(0, 6);
  });

  it('ignores masked tokens', () => {
    // The example above plus two masked tokens with wild values.
    const out = explainedVariance(
      new Float32Array([1, 2, 100, 3, 4, -7]),
      new Float32Array([1, 2, -50, 2, 5, 8]),
      new Float32Array([1, 1, 0, 1, 1, 0]),
      2,
      3,
      plain,
    );
    expect(out.value).toBeCloseTo(0.6, 12);
    expect(out.tokens).toBe(4);
  });

  it('is undefined (never NaN) where numpy would give NaN', () => {
    // Constant returns: Var R = 0 → CleanRL's NaN; here value undefined, defined false.
    const constant = explainedVariance(
      new Float32Array([2, 2, 2]),
      new Float32Array([2, 2, 3]),
      new Float32Array([1, 1, 1]),
      1,
      3,
      plain,
    );
    expect(constant.value).toBeUndefined();
    expect(constant.defined).toBe(false);
    // Σ D² with D = [0, 0, −1], mean −1/3: 1/9 + 1/9 + 4/9 = 2/3, over 3.
    expect(constant.varResidual).toBeCloseTo(2 / 9, 12);
    // An empty mask, and a single token under verl's unbiased variance: no variance at all.
    const empty = explainedVariance(returns, values, new Float32Array(4), 2, 2);
    expect(empty).toEqual({
      value: undefined,
      defined: false,
      varReturns: 0,
      varResidual: 0,
      tokens: 0,
    });
    const one = explainedVariance(returns, values, new Float32Array([0, 1, 0, 0]), 2, 2, {
      flavor: 'verl',
    });
    expect(one.defined).toBe(false);
  });

  it("is defined under verl's epsilon even for constant returns: 1 − (1/3)/1e-5", () => {
    // Unbiased Var D = (2/3) / 2 = 1/3; Var R = 0 → ev = 1 − (1/3) / 1e-5 = −33332.333…
    const out = explainedVariance(
      new Float32Array([2, 2, 2]),
      new Float32Array([2, 2, 3]),
      new Float32Array([1, 1, 1]),
      1,
      3,
      { flavor: 'verl' },
    );
    expect(out.value).toBeCloseTo(1 - 1 / 3 / 1e-5, 6);
  });

  it('property: ev ≤ 1, and ev is invariant to shifting returns and values together', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 60 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: -64, max: 64 }),
        (n, seed, shift) => {
          // Multiples of 2^-10: adding an integer shift keeps these f32 values exact.
          const grid = (x: number) => Math.round(x * 1024) / 1024;
          const r = randomLogits(n, 4, seed).map(grid);
          const v = randomLogits(n, 4, seed + 1).map((x, i) => r[i]! + grid(0.5 * x));
          const m = new Float32Array(n).fill(1);
          const a = explainedVariance(r, v, m, 1, n, plain);
          const b = explainedVariance(
            r.map((x) => x + shift),
            v.map((x) => x + shift),
            m,
            1,
            n,
            plain,
          );
          if (!a.defined) return;
          expect(a.value!).toBeLessThanOrEqual(1);
          expect(Math.abs(b.value! - a.value!)).toBeLessThan(1e-4);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: masked tokens never change the result', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), (seed) => {
        const n = 30;
        const next = seededRandom(seed);
        const m = new Float32Array(n).map(() => (next() < 0.6 ? 1 : 0));
        const r = randomLogits(n, 3, seed + 1);
        const v = randomLogits(n, 3, seed + 2);
        const a = explainedVariance(r, v, m, 5, 6, { flavor: 'verl' });
        const noise = (x: Float32Array) => x.map((y, i) => (m[i] ? y : 1e6 * (next() - 0.5)));
        expect(explainedVariance(noise(r), noise(v), m, 5, 6, { flavor: 'verl' })).toEqual(a);
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'returns',
      () =>
        explainedVariance(new Float32Array([NaN]), new Float32Array(1), new Float32Array(1), 1, 1),
    ],
    [
      'values',
      () => explainedVariance(new Float32Array(2), new Float32Array(1), new Float32Array(2), 1, 2),
    ],
    [
      'mask',
      () =>
        explainedVariance(new Float32Array(1), new Float32Array(1), new Float32Array([-1]), 1, 1),
    ],
    [
      'correction',
      () =>
        explainedVariance(new Float32Array(1), new Float32Array(1), new Float32Array(1), 1, 1, {
          correction: 2 as 0,
        }),
    ],
    [
      'epsilon',
      () =>
        explainedVariance(new Float32Array(1), new Float32Array(1), new Float32Array(1), 1, 1, {
          epsilon: -1,
        }),
    ],
  ])('rejects bad %s with an OpInputError naming it', (field, call) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(new RegExp(`explainedVariance: ${field} `));
  });
});
