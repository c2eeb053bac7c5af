import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bradleyTerryLoss } from '../../src/ops/bradley-terry';
import { OpInputError } from '../../src/ops/errors';
import { gradCheck } from '../support/gradcheck';

const f32 = (values: number[]) => Float32Array.from(values);

const close = (actual: Float32Array, expected: number[], digits = 6) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

describe('bradleyTerryLoss (CPU reference)', () => {
  it('matches two hand-worked pairs', () => {
    // Pair A: r_w = 2, r_l = 0 → z = 2: ℓ = log(1 + e^−2) = log(1.1353352832) = 0.1269280110,
    //   σ(−2) = 0.1192029220. Pair B: r_w = r_l = 0.5 → z = 0: ℓ = ln 2 = 0.6931471806, σ(0) = 0.5.
    // loss = (0.1269280110 + 0.6931471806) / 2 = 0.4100375958.
    // gradChosen = −σ(−z)/2 = [−0.0596014610, −0.25]; gradRejected = the opposite.
    // accuracy: A ordered right, B a tie (not strictly right) → 0.5; margin = (2 + 0) / 2 = 1.
    const r = bradleyTerryLoss(f32([2, 0.5]), f32([0, 0.5]));
    expect(r.loss).toBeCloseTo(0.4100375958, 9);
    close(r.gradChosen, [-0.059601461, -0.25], 8);
    close(r.gradRejected, [0.059601461, 0.25], 8);
    expect(r.accuracy).toBe(0.5);
    expect(r.margin).toBeCloseTo(1, 7);
  });

  it('subtracts a margin inside the sigmoid (TRL margin)', () => {
    // r_w = 1, r_l = 0, m = 1 → x = 0: ℓ = ln 2, gradient ∓σ(0) = ∓0.5 (one pair).
    // The reported margin stays r_w − r_l = 1, and the pair counts as ordered right.
    const r = bradleyTerryLoss(f32([1]), f32([0]), { margin: 1 });
    expect(r.loss).toBeCloseTo(Math.LN2, 9);
    close(r.gradChosen, [-0.5]);
    close(r.gradRejected, [0.5]);
    expect(r.margin).toBeCloseTo(1, 7);
    expect(r.accuracy).toBe(1);
  });

  it('stays finite for gaps far beyond exp()’s range', () => {
    // z = +200: ℓ = log1p(e^−200) ≈ 1.4e−87 and no pull; z = −200: ℓ = 200, full pull of 1/P.
    const r = bradleyTerryLoss(f32([100, -100]), f32([-100, 100]));
    expect(r.loss).toBeCloseTo(100, 6);
    close(r.gradChosen, [0, -0.5], 9);
  });

  it('has the gradient of its loss (finite differences)', () => {
    const P = 5;
    const x = Float64Array.from({ length: 2 * P }, (_, i) => Math.sin(3 * i) * 2); // [r_w | r_l]
    const parts = () =>
      [Float32Array.from(x.subarray(0, P)), Float32Array.from(x.subarray(P))] as const;
    const r = bradleyTerryLoss(...parts(), { margin: 0.3 });
    const check = gradCheck(
      x,
      [...r.gradChosen, ...r.gradRejected],
      () => bradleyTerryLoss(...parts(), { margin: 0.3 }).loss,
      { h: 2 ** -7, maxEntries: 2 * P },
    );
    expect(check.maxRelError, JSON.stringify(check.worst)).toBeLessThan(1e-3);
  });

  it('property: shifting both scores of every pair by one constant changes nothing', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -8, max: 8 }), fc.integer({ min: -8, max: 8 })), {
          minLength: 1,
          maxLength: 6,
        }),
        fc.integer({ min: -16, max: 16 }),
        (pairs, shift) => {
          const chosen = f32(pairs.map(([w]) => w / 2));
          const rejected = f32(pairs.map(([, l]) => l / 2));
          const a = bradleyTerryLoss(chosen, rejected);
          const b = bradleyTerryLoss(
            chosen.map((v) => v + shift),
            rejected.map((v) => v + shift),
          );
          // Halves and small integers are exact in float32, so the gaps are equal exactly.
          expect(b.loss).toBe(a.loss);
          expect(b.gradChosen).toEqual(a.gradChosen);
        },
      ),
    );
  });

  it.each<[string, () => unknown, string]>([
    ['no pairs', () => bradleyTerryLoss(f32([]), f32([])), 'chosen'],
    ['a rejected score too few', () => bradleyTerryLoss(f32([1, 2]), f32([1])), 'rejected'],
    ['a NaN score', () => bradleyTerryLoss(f32([1, NaN]), f32([0, 0])), 'chosen'],
    ['an infinite score', () => bradleyTerryLoss(f32([1]), f32([-Infinity])), 'rejected'],
    [
      'an infinite margin',
      () => bradleyTerryLoss(f32([1]), f32([0]), { margin: Infinity }),
      'margin',
    ],
  ])('refuses %s, naming the field', (_what, call, field) => {
    expect(call).toThrow(OpInputError);
    try {
      call();
    } catch (error) {
      expect((error as OpInputError).field).toBe(field);
    }
  });
});
