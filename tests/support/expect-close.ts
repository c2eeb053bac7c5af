import { expect } from 'vitest';

/**
 * Largest |a − e| − rel·|e| over the arrays must stay ≤ abs; the message names the worst index
 * and both values, so a failing parity test says where it parted from its CPU twin.
 */
export function expectClose(
  actual: Float32Array,
  expected: ArrayLike<number>,
  abs: number,
  rel: number,
  label: string,
): void {
  expect(actual.length, label).toBe(expected.length);
  let worst = -Infinity;
  let at = -1;
  for (let i = 0; i < actual.length; i++) {
    // A NaN on either side is as far off as it gets (and must not be forgotten by a later index).
    const diff = Math.abs(actual[i]! - expected[i]!) - rel * Math.abs(expected[i]!);
    const excess = Number.isNaN(diff) ? Infinity : diff;
    if (excess > worst) [worst, at] = [excess, i];
  }
  expect(worst, `${label}: index ${at}: ${actual[at]} vs ${expected[at]}`).toBeLessThanOrEqual(abs);
}

/** The largest |a[i] − b[i]|; the lengths must agree. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}
