import { describe, expect, it } from 'vitest';
import {
  debiasedEma,
  extent,
  formatTick,
  halveSeries,
  linePath,
  linear,
  robustExtent,
  thinIndices,
  ticks,
} from '../../src/state/chart';
import { debiasedEma as smoothingEma } from '../../src/compare/smoothing';

// debiasedEma's own tests are in tests/compare/smoothing.test.ts, where it now lives.
describe('debiasedEma re-export', () => {
  it("is the compare module's smoother", () => {
    expect(debiasedEma).toBe(smoothingEma);
  });
});

describe('chart helpers', () => {
  it.each([
    [5, 10, [0, 1, 2, 3, 4]],
    [10, 4, [0, 3, 6, 9]],
    [7, 3, [0, 3, 6]],
  ])('thinIndices(%i, %i)', (length, max, expected) =>
    expect(thinIndices(length, max)).toEqual(expected),
  );

  it('extent ignores non-finite values and widens flat ranges', () => {
    expect(extent([[1, NaN, 3], [-2]])).toEqual([-2, 3]);
    expect(extent([[5, 5]])).toEqual([4.5, 5.5]);
    expect(extent([[]])).toEqual([0, 1]);
  });

  it('robustExtent drops the extreme 1 %', () => {
    const values = [-2000, ...Array.from({ length: 198 }, (_, i) => -20 + (i % 7)), 50];
    expect(robustExtent([values])).toEqual([-20, -14]);
  });

  it('linear maps the domain onto the range', () => {
    const f = linear(0, 10, 100, 200);
    expect([f(0), f(5), f(10)]).toEqual([100, 150, 200]);
  });

  it('linePath starts a new sub-path after a gap', () => {
    const id = (v: number) => v;
    expect(linePath([1, 2, 3, 4], [1, NaN, 3, 4], id, id)).toBe('M1.0 1.0M3.0 3.0L4.0 4.0');
  });

  it.each([
    [0, 10, 5, [0, 2, 4, 6, 8, 10]],
    [-1, 1, 4, [-1, -0.5, 0, 0.5, 1]],
    [0, 250, 5, [0, 50, 100, 150, 200, 250]],
  ])('ticks(%d, %d, %i)', (lo, hi, count, expected) =>
    expect(ticks(lo, hi, count)).toEqual(expected),
  );

  it.each([
    [0, '0'],
    [0.05, '0.05'],
    [1234, '1234'],
    [50000, '50k'],
    [2500000, '2.5M'],
    [0.00002, '2e-5'],
  ])('formatTick(%d) = %s', (v, s) => expect(formatTick(v)).toBe(s));

  it('halveSeries merges neighbours and keeps the last x', () => {
    const x = [1, 2, 3, 4, 5];
    const y = [1, 3, NaN, 8, 9];
    halveSeries(x, y);
    expect(x).toEqual([2, 4, 5]);
    expect(y).toEqual([2, 8, 9]);
  });
});

describe('ticks on a nearly flat series at a large value', () => {
  it('ends (a step below float resolution cannot loop forever)', () => {
    // At 1e17 one ulp is 16: a step of 5 cannot move v (the old loop never ended).
    expect(ticks(1e17, 1e17 + 16)).toEqual([1e17]);
    expect(ticks(1123.75, 1123.75 + 1e-12).length).toBeLessThanOrEqual(6);
    expect(ticks(0, 10, 5)).toEqual([0, 2, 4, 6, 8, 10]);
  });
});
