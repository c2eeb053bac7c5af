import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bandGrid, resample } from '../../../src/state/compare-view/resample';

describe('resample and bandGrid', () => {
  it('interpolates linearly inside the run and gives NaN outside', () => {
    // Between (1, 10) and (3, 30): x 2 → 20; between (3, 30) and (4, 0): x 3.5 → 15.
    expect(resample([1, 3, 4], [10, 30, 0], [0, 1, 2, 3, 3.5, 4, 5])).toEqual([
      NaN,
      10,
      20,
      30,
      15,
      0,
      NaN,
    ]);
    expect(resample([], [], [1])).toEqual([NaN]);
  });

  it('property: resampling at the run’s own x gives its values back', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 100 }),
        (raw) => {
          const xs = [...raw].sort((a, b) => a - b);
          const ys = xs.map((x) => x * 0.5 - 3);
          expect(resample(xs, ys, xs)).toEqual(ys);
        },
      ),
    );
  });

  it('uses the reference x when few enough, else evenly spaced points', () => {
    expect(bandGrid([1, 2, 3, 4, 5], 2, 4, 10)).toEqual([2, 3, 4]);
    // 3 points inside, room for 2: the two ends of [2, 4].
    expect(bandGrid([1, 2, 3, 4, 5], 2, 4, 2)).toEqual([2, 4]);
    // 5 inside [0, 8], room for 3: 0, 4, 8.
    expect(bandGrid([0, 2, 4, 6, 8], 0, 8, 3)).toEqual([0, 4, 8]);
    // No reference point inside [5, 6] (it has 1 and 10): the two ends.
    expect(bandGrid([1, 10], 5, 6, 10)).toEqual([5, 6]);
    expect(bandGrid([1, 10], 5, 5, 10)).toEqual([5]);
  });
});
