import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { debiasedEma, movingAverage, smooth, type Smoothing } from '../../src/compare/smoothing';

/** Finite values with some NaN gaps. */
const series = fc.array(
  fc.oneof(
    { weight: 5, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) },
    { weight: 1, arbitrary: fc.constant(NaN) },
  ),
  { maxLength: 60 },
);

const smoothings: fc.Arbitrary<Smoothing> = fc.oneof(
  fc.constant({ kind: 'none' } as const),
  fc
    .double({ min: 0, max: 0.999, noNaN: true })
    .map((weight) => ({ kind: 'ema', weight }) as const),
  fc.integer({ min: 1, max: 12 }).map((window) => ({ kind: 'moving-average', window }) as const),
);

describe('debiasedEma', () => {
  it('matches hand-worked values', () => {
    // w = 0.5: m1 = 0.5·2 = 1, /(1 − 0.5) = 2; m2 = 0.5·1 + 0.5·4 = 2.5, /(1 − 0.25) = 10/3.
    const out = debiasedEma([2, 4], 0.5);
    expect(out[0]).toBeCloseTo(2, 12);
    expect(out[1]).toBeCloseTo(10 / 3, 12);
  });

  it('passes NaN through without counting it or resetting', () => {
    const out = debiasedEma([2, NaN, 4], 0.5);
    expect(out[1]).toBeNaN();
    expect(out[2]).toBeCloseTo(10 / 3, 12);
  });

  it('is the identity at weight 0 and refuses weights outside [0, 1)', () => {
    expect(debiasedEma([1, -2, 3], 0)).toEqual([1, -2, 3]);
    expect(() => debiasedEma([1], 1)).toThrow('weight must be in [0, 1)');
    expect(() => debiasedEma([1], -0.1)).toThrow('weight must be in [0, 1)');
    expect(() => debiasedEma([1], NaN)).toThrow('weight must be in [0, 1)');
  });

  it('keeps a constant series constant (the debiasing removes the pull toward 0)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e3, max: 1e3, noNaN: true }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (c, w) => {
          for (const v of debiasedEma([c, c, c, c], w)) expect(v).toBeCloseTo(c, 6);
        },
      ),
    );
  });
});

describe('movingAverage', () => {
  it('averages the last k finite values (hand-worked)', () => {
    // k = 3: 3; (3+6)/2 = 4.5; (3+6+9)/3 = 6; (6+9+12)/3 = 9.
    expect(movingAverage([3, 6, 9, 12], 3)).toEqual([3, 4.5, 6, 9]);
    // k = 2 with a gap: 1; NaN; the last two finite values 1 and 3 → 2; 3 and 5 → 4.
    const out = movingAverage([1, NaN, 3, 5], 2);
    expect(out[0]).toBe(1);
    expect(out[1]).toBeNaN();
    expect(out.slice(2)).toEqual([2, 4]);
  });

  it('refuses windows that are not integers ≥ 1', () => {
    expect(() => movingAverage([1], 0)).toThrow('window must be an integer in [1, 1000000], got 0');
    expect(() => movingAverage([1], 1.5)).toThrow('got 1.5');
    expect(() => movingAverage([1], 2e6)).toThrow('got 2000000');
  });

  it('equals the mean of the last k finite values, over long series too', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double({ min: -1e3, max: 1e3, noNaN: true }), fc.constant(NaN)), {
          maxLength: 200,
        }),
        fc.integer({ min: 1, max: 20 }),
        (values, k) => {
          const out = movingAverage(values, k);
          const seen: number[] = [];
          values.forEach((v, i) => {
            if (!Number.isFinite(v)) return expect(out[i]).toBeNaN();
            seen.push(v);
            const last = seen.slice(-k);
            const mean = last.reduce((s, x) => s + x, 0) / last.length;
            expect(out[i]).toBeCloseTo(mean, 6);
          });
        },
      ),
    );
  });
});

describe('smooth', () => {
  it("'none' keeps finite values and turns ±Infinity into gaps", () => {
    expect(smooth([1, Infinity, -2], { kind: 'none' })).toEqual([1, NaN, -2]);
  });

  it('dispatches to the EMA and the moving average', () => {
    expect(smooth([2, 4], { kind: 'ema', weight: 0.5 })).toEqual(debiasedEma([2, 4], 0.5));
    expect(smooth([3, 6, 9], { kind: 'moving-average', window: 2 })).toEqual([3, 4.5, 7.5]);
  });

  it('is causal: appending points never changes earlier smoothed values', () => {
    fc.assert(
      fc.property(series, series, smoothings, (head, tail, smoothing) => {
        const alone = smooth(head, smoothing);
        const grown = smooth([...head, ...tail], smoothing);
        // Exactly equal (NaN equals NaN here): the curve does not change with run length.
        expect(grown.slice(0, head.length)).toEqual(alone);
      }),
    );
  });
});
