import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { groupAdvantages, rlooAdvantages } from '../../src/ops/group-advantages';
import { seededRandom } from '../support/random';

const close = (actual: Float32Array, expected: number[], digits = 6) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

/** Random scores; `levels` > 0 draws from that many distinct values (so ties and zero-std groups occur). */
function randomScores(n: number, seed: number, levels = 0): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: n }, () =>
    levels > 0 ? Math.floor(next() * levels) : next() * 10 - 5,
  );
}

describe('groupAdvantages (CPU reference)', () => {
  // Group [1, 0, 0, 1]: mean 0.5, deviations ±0.5, Σd² = 1, unbiased std = √(1/3) = 0.57735027.
  const scores = new Float32Array([1, 0, 0, 1]);

  it('matches hand-worked GRPO values for each framework’s epsilon', () => {
    // verl: 0.5 / (0.57735027 + 1e-6) = 0.86602390
    close(groupAdvantages(scores, 4).advantages, [0.8660239, -0.8660239, -0.8660239, 0.8660239]);
    // TRL:  0.5 / (0.57735027 + 1e-4) = 0.86587543
    close(
      groupAdvantages(scores, 4, { flavor: 'trl' }).advantages,
      [0.86587543, -0.86587543, -0.86587543, 0.86587543],
    );
    // OpenRLHF: 0.5 / (0.57735027 + 1e-9) = 0.86602540
    close(
      groupAdvantages(scores, 4, { flavor: 'openrlhf' }).advantages,
      [0.8660254, -0.8660254, -0.8660254, 0.8660254],
    );
    const stats = groupAdvantages(scores, 4).stats;
    expect(stats.groupMean[0]).toBe(0.5);
    expect(stats.groupStd[0]).toBeCloseTo(Math.sqrt(1 / 3), 7);
  });

  it('matches Dr. GRPO (no std) and the population-std variant', () => {
    // 'none': s − mean = ±0.5 in every flavor.
    for (const flavor of ['verl', 'trl', 'openrlhf'] as const) {
      close(
        groupAdvantages(scores, 4, { flavor, stdNormalization: 'none' }).advantages,
        [0.5, -0.5, -0.5, 0.5],
      );
    }
    // stdUnbiased = false: std = √(1/4) = 0.5 → 0.5 / (0.5 + 1e-6) = 0.999998
    close(
      groupAdvantages(scores, 4, { stdUnbiased: false }).advantages,
      [0.999998, -0.999998, -0.999998, 0.999998],
    );
  });

  it("matches TRL scale_rewards 'batch' and 'group' by hand, with a zero-std group", () => {
    // Groups [1, 0 | 1, 1]. Batch of all four: mean 0.75, deviations 0.25, −0.75, 0.25, 0.25,
    // Σd² = 0.0625·3 + 0.5625 = 0.75, unbiased var 0.25, σ_B = 0.5.
    // 'batch': group 1 mean 0.5 → ±0.5 / (0.5 + 1e-4) = ±0.99980004; group 2 is constant → 0.
    const s = new Float32Array([1, 0, 1, 1]);
    const batch = groupAdvantages(s, 2, { flavor: 'trl', stdNormalization: 'batch' });
    close(batch.advantages, [0.99980004, -0.99980004, 0, 0]);
    expect(batch.stats.batchStd).toBeCloseTo(0.5, 12);
    expect(batch.stats.zeroStdGroups).toBe(1);
    expect(batch.stats.fracRewardZeroStd).toBe(0.5);
    // 'group': group 1 std = √(0.5/1) = 0.70710678 → ±0.5 / 0.70720678 = ±0.7070068.
    const group = groupAdvantages(s, 2, { flavor: 'trl' });
    close(group.advantages, [0.7070068, -0.7070068, 0, 0]);
    expect(group.stats.batchStd).toBeUndefined();
  });

  it('gives zero-std groups exactly 0 and counts them', () => {
    // [5, 5, 5 | 1, 2, 3]: the first group is constant.
    const { advantages, stats } = groupAdvantages(new Float32Array([5, 5, 5, 1, 2, 3]), 3);
    expect(Array.from(advantages.slice(0, 3))).toEqual([0, 0, 0]);
    expect(stats).toMatchObject({ numGroups: 2, zeroStdGroups: 1, fracRewardZeroStd: 0.5 });
    expect(stats.groupStd[0]).toBe(0);
    expect(stats.groupMean[0]).toBe(5);
    // Non-representable constants stay exact too.
    const tenth = groupAdvantages(new Float32Array([0.1, 0.1, 0.1]), 3);
    expect(Array.from(tenth.advantages)).toEqual([0, 0, 0]);
    expect(tenth.stats.zeroStdGroups).toBe(1);
  });

  it('treats groups of one as verl does (mean 0, std 1), and rejects them for TRL and OpenRLHF', () => {
    // verl: 2 / (1 + 1e-6) = 1.999998, −1 / (1 + 1e-6) = −0.999999; Dr. GRPO: the score itself.
    const one = new Float32Array([2, -1]);
    const { advantages, stats } = groupAdvantages(one, 1);
    close(advantages, [1.999998, -0.999999]);
    expect(stats.zeroStdGroups).toBe(0);
    expect(Array.from(stats.groupMean)).toEqual([0, 0]);
    expect(Array.from(stats.groupStd)).toEqual([1, 1]);
    expect(Array.from(groupAdvantages(one, 1, { stdNormalization: 'none' }).advantages)).toEqual([
      2, -1,
    ]);
    for (const flavor of ['trl', 'openrlhf'] as const) {
      expect(() => groupAdvantages(one, 1, { flavor })).toThrow(
        /groupSize must be ≥ 2 when singleSampleGroups is 'error'/,
      );
    }
  });

  it('property: advantages sum to 0 within each group (normalized or not)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 2, max: 12 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('group', 'batch', 'none'),
        fc.constantFrom('verl', 'trl', 'openrlhf'),
        fc.constantFrom(0, 3),
        (numGroups, g, seed, stdNormalization, flavor, levels) => {
          const s = randomScores(numGroups * g, seed, levels);
          const { advantages, stats } = groupAdvantages(s, g, { flavor, stdNormalization });
          let zero = 0;
          for (let k = 0; k < numGroups; k++) {
            const group = advantages.subarray(k * g, (k + 1) * g);
            expect(group.reduce((a, v) => a + v, 0)).toBeCloseTo(0, 4);
            const constant = s.subarray(k * g, (k + 1) * g).every((v) => v === s[k * g]);
            if (constant) {
              zero += 1;
              expect(Array.from(group).every((v) => v === 0)).toBe(true);
            }
          }
          expect(stats.zeroStdGroups).toBe(zero);
          expect(stats.fracRewardZeroStd).toBe(zero / numGroups);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: permuting a group permutes its advantages', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (g, seed) => {
          const s = randomScores(g, seed);
          const reversed = s.slice().reverse();
          const a = groupAdvantages(s, g).advantages;
          const b = groupAdvantages(reversed, g).advantages;
          for (let i = 0; i < g; i++) expect(b[g - 1 - i]).toBeCloseTo(a[i]!, 5);
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'NaN score',
      () => groupAdvantages(new Float32Array([0, 1, NaN, 2]), 2),
      /groupAdvantages: scores must be finite, but index 2 is NaN/,
    ],
    [
      'B not divisible by G',
      () => groupAdvantages(new Float32Array(10), 4),
      /groupSize must divide B = 10 \(groups are contiguous\), got 4/,
    ],
    [
      'G larger than B',
      () => groupAdvantages(new Float32Array(2), 3),
      /groupSize must be an integer in \[1, 2\], got 3/,
    ],
    [
      'empty scores',
      () => groupAdvantages(new Float32Array(0), 1),
      /scores must hold at least one/,
    ],
    [
      'stdEpsilon 0',
      () => groupAdvantages(new Float32Array(2), 2, { stdEpsilon: 0 }),
      /stdEpsilon must be in \(0, ∞\), got 0/,
    ],
    [
      'stdNormalization',
      () => groupAdvantages(new Float32Array(2), 2, { stdNormalization: 'global' as 'group' }),
      /stdNormalization must be one of 'group', 'batch', 'none', got 'global'/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});

describe('rlooAdvantages (CPU reference)', () => {
  it('matches hand-worked leave-one-out values', () => {
    // [1, 2, 3]: Σ = 6, adv_i = (3·s_i − 6) / 2 = [−1.5, 0, 1.5]
    close(rlooAdvantages(new Float32Array([1, 2, 3]), 3).advantages, [-1.5, 0, 1.5]);
    // Two groups [1, 0 | 4, 4]: (2·1 − 1)/1 = 1, (0 − 1)/1 = −1; the constant group gets 0.
    const r = rlooAdvantages(new Float32Array([1, 0, 4, 4]), 2, { flavor: 'openrlhf' });
    close(r.advantages, [1, -1, 0, 0]);
    expect(r.stats.zeroStdGroups).toBe(1);
  });

  it('uses baseline 0 for groups of one in verl, and rejects them for OpenRLHF and TRL', () => {
    expect(Array.from(rlooAdvantages(new Float32Array([3, -2]), 1).advantages)).toEqual([3, -2]);
    for (const flavor of ['trl', 'openrlhf'] as const) {
      const call = () => rlooAdvantages(new Float32Array([3, -2]), 1, { flavor });
      expect(call).toThrow(OpInputError);
      expect(call).toThrow(/groupSize must be ≥ 2/);
    }
  });

  it('property: RLOO = G/(G−1) · Dr. GRPO, and sums to 0 per group', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 2, max: 10 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (numGroups, g, seed) => {
          const s = randomScores(numGroups * g, seed);
          const rloo = rlooAdvantages(s, g).advantages;
          const dr = groupAdvantages(s, g, { stdNormalization: 'none' }).advantages;
          for (let i = 0; i < s.length; i++) {
            expect(rloo[i]).toBeCloseTo((dr[i]! * g) / (g - 1), 4);
          }
          for (let k = 0; k < numGroups; k++) {
            const sum = rloo.subarray(k * g, (k + 1) * g).reduce((a, v) => a + v, 0);
            expect(sum).toBeCloseTo(0, 4);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('rejects non-finite scores and bad group sizes like groupAdvantages', () => {
    expect(() => rlooAdvantages(new Float32Array([1, Infinity]), 2)).toThrow(
      /rlooAdvantages: scores must be finite, but index 1 is Infinity/,
    );
    expect(() => rlooAdvantages(new Float32Array(6), 4)).toThrow(/groupSize must divide B = 6/);
  });
});
