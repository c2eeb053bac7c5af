import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError, logSoftmax } from '../../src/ops';
import { randomLogits } from '../support/random';

describe('logSoftmax (CPU reference)', () => {
  it('matches hand-worked values', () => {
    // Row [0, ln 2, ln 3]: Σexp = 1 + 2 + 3 = 6, so log p = [−ln 6, ln 2 − ln 6, ln 3 − ln 6].
    const out = logSoftmax(new Float32Array([0, Math.log(2), Math.log(3)]), 1, 3);
    expect(out[0]).toBeCloseTo(-Math.log(6), 6);
    expect(out[1]).toBeCloseTo(Math.log(2 / 6), 6);
    expect(out[2]).toBeCloseTo(Math.log(3 / 6), 6);
  });

  it('gives log(1/V) for a constant row and log 1 = 0 for a single column', () => {
    const uniform = logSoftmax(new Float32Array(8).fill(7.5), 2, 4);
    for (const v of uniform) expect(v).toBeCloseTo(-Math.log(4), 6);
    expect(Array.from(logSoftmax(new Float32Array([-3, 42]), 2, 1))).toEqual([0, 0]);
  });

  it('stays finite and exact for logits of magnitude 1e4', () => {
    // Row [1e4, 1e4 − 1, −1e4]: the last term underflows to 0; the first two are a 2-way softmax.
    const out = logSoftmax(new Float32Array([1e4, 1e4 - 1, -1e4]), 1, 3);
    const log1pe = Math.log(1 + Math.exp(-1));
    expect(out[0]).toBeCloseTo(-log1pe, 5);
    expect(out[1]).toBeCloseTo(-1 - log1pe, 5);
    expect(out[2]).toBeCloseTo(-2e4 - log1pe, 0);
  });

  it('treats rows independently (row r of a batch equals the row alone)', () => {
    const logits = randomLogits(3 * 50, 5, 11);
    const batch = logSoftmax(logits, 3, 50);
    const alone = logSoftmax(logits.slice(50, 100), 1, 50);
    expect(Array.from(batch.slice(50, 100))).toEqual(Array.from(alone));
  });

  it('property: each row exponentiates to a distribution, and shifting a row changes nothing', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: -1000, max: 1000, noNaN: true }),
        (rows, cols, seed, shift) => {
          const logits = randomLogits(rows * cols, 20, seed);
          const out = logSoftmax(logits, rows, cols);
          const shifted = logSoftmax(
            logits.map((v) => v + shift),
            rows,
            cols,
          );
          for (let r = 0; r < rows; r++) {
            let total = 0;
            for (let c = 0; c < cols; c++) total += Math.exp(out[r * cols + c]!);
            expect(total).toBeCloseTo(1, 5);
          }
          for (let i = 0; i < out.length; i++) {
            expect(out[i]!).toBeLessThanOrEqual(0);
            // f32 rounding of (z + shift) limits agreement to ~|shift|·2^-24 per element.
            expect(Math.abs(out[i]! - shifted[i]!)).toBeLessThan(1e-4 + Math.abs(shift) * 2e-7);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each([
    ['rows', () => logSoftmax(new Float32Array(4), 0, 4), /rows must be an integer in \[1, /],
    ['cols', () => logSoftmax(new Float32Array(4), 2, 1.5), /cols must be an integer in \[1, /],
    [
      'logits length',
      () => logSoftmax(new Float32Array(5), 2, 2),
      /logits must have rows × cols = 2 × 2 = 4 elements, got 5/,
    ],
    [
      'NaN logit',
      () => logSoftmax(new Float32Array([0, 1, NaN, 2]), 2, 2),
      /index 2 \(row 1, col 0\) is NaN/,
    ],
    [
      'infinite logit',
      () => logSoftmax(new Float32Array([0, -Infinity]), 1, 2),
      /index 1 \(row 0, col 1\) is -Infinity/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
