import { describe, expect, it } from 'vitest';
import { extent, formatTick, halveSeries, robustExtent } from '../../src/state/chart';

describe('chart helpers', () => {
  it('extent ignores non-finite values and widens flat ranges', () => {
    expect(extent([[1, NaN, 3], [-2]])).toEqual([-2, 3]);
    expect(extent([[5, 5]])).toEqual([4.5, 5.5]);
    expect(extent([[]])).toEqual([0, 1]);
  });

  it('robustExtent drops the extreme 1 %', () => {
    const values = [-2000, ...Array.from({ length: 198 }, (_, i) => -20 + (i % 7)), 50];
    expect(robustExtent([values])).toEqual([-20, -14]);
  });

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
