import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { broadcastToTokens, sumOverTokens } from '../../src/ops/broadcast';
import { randomLogits, seededRandom } from '../support/random';

describe('sumOverTokens / broadcastToTokens (CPU reference)', () => {
  it('matches hand-worked values', () => {
    // Rows [1, 2, 3] and [0.5, 0, −4]: sums 6 and −3.5 (unmasked, as verl's sum(dim=-1)).
    const tokens = new Float32Array([1, 2, 3, 0.5, 0, -4]);
    expect(Array.from(sumOverTokens(tokens, 2, 3))).toEqual([6, -3.5]);
    // Values [2, −3] over mask [[1, 1, 0], [1, 0, 0]] → [[2, 2, 0], [−3, 0, 0]], never −0.
    const out = broadcastToTokens(
      new Float32Array([2, -3]),
      new Float32Array([1, 1, 0, 1, 0, 0]),
      2,
      3,
    );
    expect(Array.from(out)).toEqual([2, 2, 0, -3, 0, 0]);
    expect(Object.is(out[4], 0)).toBe(true);
  });

  it('property: summing the broadcast gives value × mask count per row', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const next = seededRandom(seed);
          const values = randomLogits(rows, 4, seed);
          const mask = Float32Array.from({ length: rows * cols }, () => (next() < 0.5 ? 1 : 0));
          const sums = sumOverTokens(broadcastToTokens(values, mask, rows, cols), rows, cols);
          const counts = sumOverTokens(mask, rows, cols);
          for (let b = 0; b < rows; b++) {
            expect(sums[b]).toBeCloseTo(values[b]! * counts[b]!, 4);
          }
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'NaN token',
      () => sumOverTokens(new Float32Array([0, NaN]), 1, 2),
      /sumOverTokens: tokens must be finite, but index 1 \(row 0, col 1\) is NaN/,
    ],
    [
      'tokens shape',
      () => sumOverTokens(new Float32Array(5), 2, 3),
      /tokens must have rows × cols = 2 × 3 = 6 elements, got 5/,
    ],
    [
      'seqValues length',
      () => broadcastToTokens(new Float32Array(3), new Float32Array(4), 2, 2),
      /seqValues must have B = 2 elements, got 3/,
    ],
    [
      'mask value',
      () => broadcastToTokens(new Float32Array(2), new Float32Array([1, 0, 0.3, 1]), 2, 2),
      /mask must be 0 or 1, but index 2 \(row 1, col 0\) is 0.3/,
    ],
    [
      'infinite seqValue',
      () => broadcastToTokens(new Float32Array([1, -Infinity]), new Float32Array(4), 2, 2),
      /seqValues must be finite, but index 1 is -Infinity/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
