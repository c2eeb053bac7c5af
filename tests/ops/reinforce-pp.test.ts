import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import {
  discountedReturns,
  reinforcePlusPlus,
  reinforcePlusPlusBaseline,
} from '../../src/ops/reinforce-pp';
import { randomLogits, seededRandom } from '../support/random';

const close = (actual: Float32Array, expected: number[], digits = 6) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

describe('discountedReturns (CPU reference)', () => {
  it("resets at masked steps in verl's mode and zeroes their rewards in OpenRLHF's", () => {
    // r = [1, 5, 1], m = [1, 0, 1], γ = 0.5.
    // reset:       t=2: 1; t=1: 5 + 0.5·1 = 5.5, then running ← 0; t=0: 1 + 0 = 1 → [1, 5.5, 1]
    // zero-reward: r·m = [1, 0, 1]; t=2: 1; t=1: 0 + 0.5 = 0.5; t=0: 1 + 0.25 = 1.25
    const r = new Float32Array([1, 5, 1]);
    const m = new Float32Array([1, 0, 1]);
    close(discountedReturns(r, m, 1, 3, { gamma: 0.5 }), [1, 5.5, 1]);
    close(discountedReturns(r, m, 1, 3, { flavor: 'openrlhf', gamma: 0.5 }), [1.25, 0.5, 1]);
  });

  it('property: with γ = 1 and nothing masked, returns are suffix sums', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('verl', 'openrlhf'),
        (cols, seed, flavor) => {
          const r = randomLogits(cols, 3, seed);
          const out = discountedReturns(r, new Float32Array(cols).fill(1), 1, cols, { flavor });
          let suffix = 0;
          for (let t = cols - 1; t >= 0; t--) {
            suffix += r[t]!;
            expect(out[t]).toBeCloseTo(suffix, 4);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('reinforcePlusPlus (CPU reference)', () => {
  it('whitens returns-to-go over the unmasked tokens (verl)', () => {
    // γ = 0.5. Row 0: r = [0, 0, 1], m = [1, 1, 1] → returns [0.25, 0.5, 1].
    // Row 1: r = [0, 2, 0], m = [1, 1, 0] → t=2: 0 (then reset); t=1: 2; t=0: 0 + 0.5·2 = 1.
    // Unmasked returns [0.25, 0.5, 1, 1, 2]: mean 0.95, deviations −0.7, −0.45, 0.05, 0.05, 1.05,
    // Σd² = 0.49 + 0.2025 + 0.0025 + 0.0025 + 1.1025 = 1.8, unbiased var 0.45, √0.45 = 0.67082039:
    // [−1.0434984, −0.6708204, 0.0745356 | 0.0745356, 1.5652476, 0]
    const rewards = new Float32Array([0, 0, 1, 0, 2, 0]);
    const mask = new Float32Array([1, 1, 1, 1, 1, 0]);
    const out = reinforcePlusPlus(rewards, mask, 2, 3, { gamma: 0.5 });
    close(out.returns, [0.25, 0.5, 1, 1, 2, 0]);
    close(out.advantages, [-1.0434984, -0.6708204, 0.0745356, 0.0745356, 1.5652476, 0]);
    expect(out.whitenStats.count).toBe(5);
    expect(out.whitenStats.mean).toBeCloseTo(0.95, 12);
    expect(out.whitenStats.variance).toBeCloseTo(0.45, 12);
  });

  it('property: advantages are 0 exactly where masked, whatever the flavor', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('verl', 'trl', 'openrlhf'),
        (rows, cols, seed, flavor) => {
          const next = seededRandom(seed);
          const r = randomLogits(rows * cols, 2, seed);
          const m = Float32Array.from(r, () => (next() < 0.6 ? 1 : 0));
          const { advantages } = reinforcePlusPlus(r, m, rows, cols, { flavor, gamma: 0.9 });
          advantages.forEach((v, i) => {
            if (m[i] === 0) expect(Object.is(v, 0)).toBe(true);
            expect(Number.isFinite(v)).toBe(true);
          });
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'gamma',
      () => reinforcePlusPlus(new Float32Array(2), new Float32Array(2), 1, 2, { gamma: 2 }),
      /gamma must be in \[0, 1\], got 2/,
    ],
    [
      'NaN reward',
      () => reinforcePlusPlus(new Float32Array([NaN, 0]), new Float32Array(2), 1, 2),
      /reinforcePlusPlus: rewards must be finite, but index 0 \(row 0, col 0\) is NaN/,
    ],
    [
      'mask value',
      () => reinforcePlusPlus(new Float32Array(2), new Float32Array([2, 0]), 1, 2),
      /mask must be 0 or 1, but index 0 \(row 0, col 0\) is 2/,
    ],
    [
      'whiten epsilon',
      () =>
        reinforcePlusPlus(new Float32Array(2), new Float32Array(2), 1, 2, {
          whiten: { epsilon: -1 },
        }),
      /epsilon must be in \(0, ∞\), got -1/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});

describe('reinforcePlusPlusBaseline (CPU reference)', () => {
  // B = 4, T = 2, G = 2. Rows [0, 1], [0, 0], [1, 1], [0, 1]; row 3's second token masked.
  // scores = [1, 0, 2, 1]; group means 0.5 and 1.5 → centered [0.5, −0.5, 0.5, −0.5].
  // Tokens: [0.5, 0.5 | −0.5, −0.5 | 0.5, 0.5 | −0.5, 0]; unmasked: four 0.5 and three −0.5,
  // n = 7, mean = 0.5/7 = 1/14; deviations 3/7 (×4) and −4/7 (×3); Σd² = (36 + 48)/49 = 12/7.
  const rewards = new Float32Array([0, 1, 0, 0, 1, 1, 0, 1]);
  const mask = new Float32Array([1, 1, 1, 1, 1, 1, 1, 0]);

  it('matches hand-worked values for verl and OpenRLHF whitening', () => {
    // verl: var = (12/7)/6 = 2/7 → 3/7 / √(2/7) = 3/√14 = 0.80178373, −4/√14 = −1.06904497.
    const verl = reinforcePlusPlusBaseline(rewards, mask, 4, 2, 2);
    close(verl.centeredScores, [0.5, -0.5, 0.5, -0.5]);
    const [p, q] = [0.80178373, -1.06904497];
    close(verl.advantages, [p, p, q, q, p, p, q, 0]);
    // OpenRLHF: var = (12/7)/7 = 12/49 → 3/√12 = 0.8660254, −4/√12 = −1.15470054.
    const orl = reinforcePlusPlusBaseline(rewards, mask, 4, 2, 2, { flavor: 'openrlhf' });
    const [u, w] = [0.8660254, -1.15470054];
    close(orl.advantages, [u, u, w, w, u, u, w, 0]);
  });

  it('treats groups of one as verl (mean 0) or OpenRLHF (own mean → 0)', () => {
    // G = 1, verl: centered = scores = [1, 0, 2, 1]; OpenRLHF: every score is its own mean → 0.
    const verl = reinforcePlusPlusBaseline(rewards, mask, 4, 2, 1);
    expect(Array.from(verl.centeredScores)).toEqual([1, 0, 2, 1]);
    const orl = reinforcePlusPlusBaseline(rewards, mask, 4, 2, 1, { flavor: 'openrlhf' });
    expect(Array.from(orl.advantages).every((v) => v === 0)).toBe(true);
  });

  it('property: advantages are constant along each row’s unmasked tokens', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (numGroups, g, cols, seed) => {
          const rows = numGroups * g;
          const next = seededRandom(seed);
          const r = randomLogits(rows * cols, 1, seed);
          const m = Float32Array.from(r, () => (next() < 0.7 ? 1 : 0));
          const { advantages } = reinforcePlusPlusBaseline(r, m, rows, cols, g);
          for (let b = 0; b < rows; b++) {
            const kept = [...Array(cols).keys()].filter((t) => m[b * cols + t] === 1);
            for (const t of kept) {
              expect(advantages[b * cols + t]).toBe(advantages[b * cols + kept[0]!]);
            }
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'B not divisible by G',
      () => reinforcePlusPlusBaseline(new Float32Array(6), new Float32Array(6), 3, 2, 2),
      /groupSize must divide B = 3 \(groups are contiguous\), got 2/,
    ],
    [
      'infinite reward',
      () =>
        reinforcePlusPlusBaseline(new Float32Array([0, Infinity]), new Float32Array(2), 2, 1, 1),
      /rewards must be finite, but index 1 \(row 1, col 0\) is Infinity/,
    ],
    [
      'singleSampleGroups',
      () =>
        reinforcePlusPlusBaseline(new Float32Array(2), new Float32Array(2), 2, 1, 1, {
          singleSampleGroups: 'error' as 'mean0',
        }),
      /singleSampleGroups must be one of 'mean0', 'own-mean', got 'error'/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
