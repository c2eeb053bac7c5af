import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { whiten } from '../../src/ops/whiten';
import { randomLogits, seededRandom } from '../support/random';

const close = (actual: Float32Array, expected: number[], digits = 6) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

describe('whiten (CPU reference)', () => {
  // x = [1, 2, 3, 100], mask = [1, 1, 1, 0]: n = 3, mean = 2, Σ(x − mean)² = 1 + 0 + 1 = 2.
  const x = new Float32Array([1, 2, 3, 100]);
  const mask = new Float32Array([1, 1, 1, 0]);

  it('matches hand-worked values for verl (unbiased, rsqrt(var + 1e-8))', () => {
    // var = 2 / (3 − 1) = 1; scale = 1/√(1 + 1e-8) = 0.999999995 → [−1, 0, 1], 0 where masked.
    const { output, stats } = whiten(x, mask, 1, 4);
    close(output, [-0.999999995, 0, 0.999999995, 0]);
    expect(stats).toEqual({ count: 3, mean: 2, variance: 1, emptyMask: false });
    // TRL's masked_whiten has the same definition.
    expect(Array.from(whiten(x, mask, 1, 4, { flavor: 'trl' }).output)).toEqual(Array.from(output));
  });

  it('matches hand-worked values for OpenRLHF (population variance, clamp)', () => {
    // var = 2 / 3; scale = 1/√max(2/3, 1e-8) = √1.5 = 1.22474487 → [−1.2247449, 0, 1.2247449, 0].
    const { output, stats } = whiten(x, mask, 2, 2, { flavor: 'openrlhf' });
    close(output, [-1.22474487, 0, 1.22474487, 0]);
    expect(stats.variance).toBeCloseTo(2 / 3, 12);
  });

  it('shows the epsilon modes apart when the variance is below ε', () => {
    // x = [0, 1e-4]: mean 5e-5, deviations ±5e-5, Σd² = 5e-9.
    // verl: var = 5e-9 / 1; scale = 1/√(5e-9 + 1e-8) = 1/√1.5e-8 → ±5e-5 / 1.22474e-4 = ±0.40824829
    // OpenRLHF: var = 2.5e-9; scale = 1/√max(2.5e-9, 1e-8) = 1e4 → ±0.5
    const tiny = new Float32Array([0, 1e-4]);
    const ones = new Float32Array([1, 1]);
    close(whiten(tiny, ones, 1, 2).output, [-0.40824829, 0.40824829]);
    close(whiten(tiny, ones, 1, 2, { flavor: 'openrlhf' }).output, [-0.5, 0.5]);
  });

  it('adds the mean back with shiftMean = false, still 0 at masked positions', () => {
    // verl scale ≈ 1: [−1, 0, 1] + 2 = [1, 2, 3].
    close(whiten(x, mask, 1, 4, { shiftMean: false }).output, [1, 2, 3, 0]);
  });

  it('handles degenerate masks without NaN', () => {
    // Σm = 0: all zeros, emptyMask.
    const empty = whiten(x, new Float32Array(4), 1, 4);
    expect(Array.from(empty.output)).toEqual([0, 0, 0, 0]);
    expect(empty.stats).toEqual({ count: 0, mean: 0, variance: 0, emptyMask: true });
    // Σm = 1, unbiased: variance undefined → reported 0; the single position whitens to 0.
    const single = whiten(x, new Float32Array([0, 1, 0, 0]), 1, 4);
    expect(Array.from(single.output)).toEqual([0, 0, 0, 0]);
    expect(single.stats).toEqual({ count: 1, mean: 2, variance: 0, emptyMask: false });
    // ... and to its own value with shiftMean = false.
    const kept = whiten(x, new Float32Array([0, 1, 0, 0]), 1, 4, { shiftMean: false });
    expect(Array.from(kept.output)).toEqual([0, 2, 0, 0]);
  });

  it('gives exactly 0 for a constant input (zero variance)', () => {
    const constant = whiten(new Float32Array([0.1, 0.1, 0.1, 7]), mask, 1, 4);
    expect(Array.from(constant.output)).toEqual([0, 0, 0, 0]);
    expect(constant.stats.variance).toBe(0);
    expect(constant.stats.mean).toBe(Math.fround(0.1));
  });

  it('property: unmasked outputs have mean ≈ 0 and unbiased variance ≈ 1; masked are 0', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: -100, max: 100, noNaN: true }),
        (rows, cols, seed, offset) => {
          const next = seededRandom(seed);
          const data = randomLogits(rows * cols, 5, seed).map((v) => v + offset);
          const m = Float32Array.from(data, () => (next() < 0.6 ? 1 : 0));
          m[0] = 1;
          m[1] = 1;
          const { output } = whiten(data, m, rows, cols);
          const kept = Array.from(output).filter((_, i) => m[i] === 1);
          const mean = kept.reduce((a, v) => a + v, 0) / kept.length;
          const variance = kept.reduce((a, v) => a + (v - mean) ** 2, 0) / (kept.length - 1);
          expect(mean).toBeCloseTo(0, 4);
          expect(variance).toBeCloseTo(1, 3);
          output.forEach((v, i) => {
            if (m[i] === 0) expect(v).toBe(0);
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('property: shifting x by a constant changes nothing (up to f32 rounding)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 60 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        (n, seed, shift) => {
          const data = randomLogits(n, 3, seed);
          const ones = new Float32Array(n).fill(1);
          const a = whiten(data, ones, 1, n).output;
          const b = whiten(
            data.map((v) => v + shift),
            ones,
            1,
            n,
          ).output;
          for (let i = 0; i < n; i++) expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-4);
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'NaN x',
      () => whiten(new Float32Array([0, NaN]), new Float32Array([1, 1]), 1, 2),
      /whiten: x must be finite, but index 1 \(row 0, col 1\) is NaN/,
    ],
    [
      'mask value',
      () => whiten(new Float32Array(2), new Float32Array([1, -1]), 2, 1),
      /mask must be 0 or 1, but index 1 \(row 1, col 0\) is -1/,
    ],
    [
      'mask shape',
      () => whiten(new Float32Array(4), new Float32Array(3), 2, 2),
      /mask must have rows × cols = 2 × 2 = 4 elements, got 3/,
    ],
    [
      'epsilon 0',
      () => whiten(new Float32Array(2), new Float32Array(2), 1, 2, { epsilon: 0 }),
      /epsilon must be in \(0, ∞\), got 0/,
    ],
    [
      'epsilonMode',
      () =>
        whiten(new Float32Array(2), new Float32Array(2), 1, 2, {
          epsilonMode: 'max' as 'add',
        }),
      /epsilonMode must be one of 'add', 'clamp', got 'max'/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
