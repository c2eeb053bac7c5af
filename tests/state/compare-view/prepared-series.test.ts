import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { smooth, type Smoothing } from '../../../src/compare/smoothing';
import { UPDATE_AXIS } from '../../../src/state/compare-view/axes';
import { preparedSeries, Smoother } from '../../../src/state/compare-view/prepared-series';

describe('Smoother and preparedSeries', () => {
  const smoothings: fc.Arbitrary<Smoothing> = fc.oneof(
    fc.constant<Smoothing>({ kind: 'none' }),
    fc
      .double({ min: 0, max: 0.999, noNaN: true })
      .map((weight): Smoothing => ({ kind: 'ema', weight })),
    fc
      .integer({ min: 1, max: 40 })
      .map((window): Smoothing => ({ kind: 'moving-average', window })),
  );
  const values = fc.array(
    fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(NaN)),
    { maxLength: 300 },
  );

  it('property: point by point gives exactly what smooth() gives for the whole series', () => {
    fc.assert(
      fc.property(values, smoothings, (ys, smoothing) => {
        const smoother = new Smoother(smoothing);
        expect(ys.map((y) => smoother.push(y))).toEqual(smooth(ys, smoothing));
      }),
    );
  });

  it('refuses a bad setting as smooth() does', () => {
    expect(() => new Smoother({ kind: 'ema', weight: 1 })).toThrow(/weight must be in \[0, 1\)/);
    expect(() => new Smoother({ kind: 'moving-average', window: 0 })).toThrow(/window must be/);
  });

  it('property: a series grown in place is extended to what a fresh computation gives', () => {
    fc.assert(
      fc.property(values, fc.integer({ min: 0, max: 300 }), smoothings, (ys, cut, smoothing) => {
        const series = { x: [] as number[], y: [] as number[] };
        const grow = (to: number) => {
          for (let i = series.x.length; i < to; i++) {
            series.x.push(i + 1);
            series.y.push(ys[i]!);
          }
        };
        grow(Math.min(cut, ys.length));
        preparedSeries(series, UPDATE_AXIS, smoothing);
        grow(ys.length);
        const extended = preparedSeries(series, UPDATE_AXIS, smoothing);
        const finite = ys.flatMap((y, i) => (Number.isFinite(y) ? [[i + 1, y] as const] : []));
        expect(extended.x).toEqual(finite.map(([x]) => x));
        expect(extended.s).toEqual(
          smooth(
            finite.map(([, y]) => y),
            smoothing,
          ),
        );
      }),
    );
  });

  it('recomputes when the lab merged points or the smoothing changed', () => {
    const series = { x: [1, 2, 3, 4], y: [0, 10, 20, 30] };
    const ema = { kind: 'ema', weight: 0.5 } as const;
    expect(preparedSeries(series, UPDATE_AXIS, ema).s).toEqual(smooth([0, 10, 20, 30], ema));
    // Merged in place as halveSeries does: (1, 2) → (2, 5), (3, 4) → (4, 25).
    series.x.splice(0, 4, 2, 4);
    series.y.splice(0, 4, 5, 25);
    expect(preparedSeries(series, UPDATE_AXIS, ema).x).toEqual([2, 4]);
    expect(preparedSeries(series, UPDATE_AXIS, ema).s).toEqual(smooth([5, 25], ema));
    expect(preparedSeries(series, UPDATE_AXIS, { kind: 'none' }).s).toEqual([5, 25]);
  });
});
