import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UPDATE_AXIS } from '../../../src/state/compare-view/axes';
import { preparedSeries } from '../../../src/state/compare-view/prepared-series';
import {
  minMaxIndices,
  thinnedSeries,
  thinningEnd,
} from '../../../src/state/compare-view/thinning';

describe('minMaxIndices', () => {
  it('keeps every point when there are at most 2 per bucket', () => {
    expect(minMaxIndices([1, 2, 3, 4], [4, 3, 2, 1], 0, 4, 2)).toEqual([0, 1, 2, 3]);
  });

  it('keeps the min and max of each bucket, in order, plus the first and last point', () => {
    // x 0…9 over [0, 10] in 2 buckets: bucket = floor(x / 5) → indices 0–4 and 5–9.
    // Bucket 0: y 0 5 1 1 9 → min at 0 (0), max at 4 (9).
    // Bucket 1: y 1 −3 1 2 0 → min at 6 (−3), max at 8 (2); the last point, 9, is added.
    const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const ys = [0, 5, 1, 1, 9, 1, -3, 1, 2, 0];
    expect(minMaxIndices(xs, ys, 0, 10, 2)).toEqual([0, 4, 6, 8, 9]);
  });

  it('puts a later max before a later min when it comes first', () => {
    // One bucket: max 7 at index 1 comes before min −1 at index 3.
    expect(minMaxIndices([0, 1, 2, 3, 4], [2, 7, 3, -1, 2], 0, 5, 1)).toEqual([0, 1, 3, 4]);
  });

  it('lets a single spike in 100k points survive, with at most 2 points per pixel column', () => {
    const n = 100_000;
    const xs = Array.from({ length: n }, (_, i) => i + 1);
    const ys = new Array<number>(n).fill(0);
    ys[54_321] = 1e6;
    const kept = minMaxIndices(xs, ys, 0, n, 600);
    expect(kept).toContain(54_321);
    expect(kept.length).toBeLessThanOrEqual(2 * 600 + 2);
    expect(kept[0]).toBe(0);
    expect(kept.at(-1)).toBe(n - 1);
  });

  it('property: increasing indices, bounded count, the extremes and both ends kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 800 }),
        fc.integer({ min: 1, max: 60 }),
        (ys, buckets) => {
          const xs = ys.map((_, i) => i);
          const kept = minMaxIndices(xs, ys, 0, xs.length, buckets);
          for (let i = 1; i < kept.length; i++) expect(kept[i]!).toBeGreaterThan(kept[i - 1]!);
          expect(kept.length).toBeLessThanOrEqual(Math.min(ys.length, 2 * buckets + 2));
          expect(kept).toContain(ys.indexOf(Math.min(...ys)));
          expect(kept).toContain(ys.indexOf(Math.max(...ys)));
          expect(kept[0]).toBe(0);
          expect(kept.at(-1)).toBe(ys.length - 1);
        },
      ),
    );
  });
});

describe('thinning a growing series', () => {
  it('rounds the grid end up to a quarter octave of the span', () => {
    // Span 64 = 2^6 already is one; span 100: log2 100 = 6.64, × 4 = 26.6 → 27 → 2^6.75 = 107.6.
    expect(thinningEnd(0, 64)).toBe(64);
    expect(thinningEnd(0, 100)).toBeCloseTo(2 ** 6.75, 12);
    expect(thinningEnd(10, 74)).toBe(74);
    expect(thinningEnd(5, 5)).toBe(6);
  });

  it('property: extending the thinning gives what thinning everything at once gives', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 600 }),
        fc.array(fc.integer({ min: 0, max: 600 }), { maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        (ys, cuts, buckets) => {
          const end = thinningEnd(0, ys.length);
          const live = { x: [] as number[], y: [] as number[] };
          const smoothing = { kind: 'ema', weight: 0.7 } as const;
          for (const cut of [...cuts.sort((a, b) => a - b), ys.length]) {
            for (let i = live.x.length; i < Math.min(cut, ys.length); i++) {
              live.x.push(i + 1);
              live.y.push(ys[i]!);
            }
            thinnedSeries(preparedSeries(live, UPDATE_AXIS, smoothing), 0, end, buckets);
          }
          const fresh = { x: live.x.slice(), y: live.y.slice() };
          const once = thinnedSeries(
            preparedSeries(fresh, UPDATE_AXIS, smoothing),
            0,
            end,
            buckets,
          );
          const grown = thinnedSeries(
            preparedSeries(live, UPDATE_AXIS, smoothing),
            0,
            end,
            buckets,
          );
          expect(grown).toEqual(once);
          const idx = minMaxIndices(fresh.x, fresh.y, 0, end, buckets);
          expect(once.raw.x).toEqual(idx.map((i) => fresh.x[i]));
        },
      ),
    );
  });
});
