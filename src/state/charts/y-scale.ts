/**
 * The y-scale every chart of the lessons and the compare view uses, chosen from what it shows:
 *
 * - a rate, accuracy, fraction or probability keeps its whole range, 0–1, so that one miss in a
 *   run at 0.97–1 reads as the small dip it is, not as a cliff;
 * - positive values that span two decades or more (value iteration's max-delta falling from 1 to
 *   1e-7, a gradient variance) go on a log scale, where the tail does not collapse onto the axis;
 * - anything else spans its values, widened to round numbers.
 *
 * Charts that are compared (side-by-side lesson widgets, seed bands) merge their extents first
 * (mergeExtents) and take one scale from the union.
 */

export interface YScale {
  kind: 'linear' | 'log';
  min: number;
  max: number;
}

/** The finite values' range, and the smallest positive one (a log scale starts there). */
export interface Extent {
  lo: number;
  hi: number;
  /** Smallest value > 0; Infinity when there is none. */
  minPositive: number;
}

export const EMPTY_EXTENT: Extent = { lo: Infinity, hi: -Infinity, minPositive: Infinity };

/** Metric names that read as a share of something: their honest range is 0–1. */
const RATE_NAME =
  /(accuracy|accuracies|_rate\b|rate$|frac|success|prob|zero_std|converged|result_copied|episodes_with_calls)/i;

export function isRateMetric(metric: string): boolean {
  return RATE_NAME.test(metric);
}

/** Extent of the finite values of every array. */
export function extentOf(arrays: readonly ArrayLike<number>[]): Extent {
  let lo = Infinity;
  let hi = -Infinity;
  let minPositive = Infinity;
  for (const values of arrays) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (!Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
      if (v > 0 && v < minPositive) minPositive = v;
    }
  }
  return { lo, hi, minPositive };
}

export function mergeExtents(extents: readonly Extent[]): Extent {
  return extents.reduce(
    (a, b) => ({
      lo: Math.min(a.lo, b.lo),
      hi: Math.max(a.hi, b.hi),
      minPositive: Math.min(a.minPositive, b.minPositive),
    }),
    EMPTY_EXTENT,
  );
}

/** Two decades: below that a linear scale still shows the shape. */
const LOG_SPAN = 100;

/**
 * The scale for `extent` of metric `metric`. `log: false` keeps a linear scale (a chart whose
 * reader compares differences, or one cut to percentiles).
 */
export function yScale(metric: string, extent: Extent, options: { log?: boolean } = {}): YScale {
  const { lo, hi } = extent;
  if (!(lo <= hi)) return { kind: 'linear', min: 0, max: 1 };
  if (isRateMetric(metric) && lo >= 0 && hi <= 1) return { kind: 'linear', min: 0, max: 1 };
  if (options.log !== false && lo > 0 && hi / lo >= LOG_SPAN) {
    return {
      kind: 'log',
      min: powerOfTen(Math.floor(Math.log10(lo))),
      max: powerOfTen(Math.ceil(Math.log10(hi))),
    };
  }
  return { kind: 'linear', ...niceRange(lo, hi) };
}

/** 10^k exactly (10 ** -5 is 9.999999999999999e-6). */
const powerOfTen = (k: number) => Number(`1e${k}`);

/** [lo, hi] widened to multiples of a round step (1, 2 or 5 × 10^k, at most about eight steps). */
export function niceRange(lo: number, hi: number): { min: number; max: number } {
  // A span near the values' float resolution (a nearly flat series at a large value) counts as
  // flat: ticks stepped by it could not advance (uPlot's splits then never end).
  if (hi - lo <= 1e-9 * Math.max(Math.abs(lo), Math.abs(hi))) {
    const pad = lo === 0 ? 0.5 : Math.abs(lo) * 0.05;
    return { min: lo - pad, max: hi + pad };
  }
  const raw = (hi - lo) / 8;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  // + 0: −0 (a ceiling of a small negative) labels as "-0".
  const min = Math.floor(lo / step) * step + 0;
  const max = Math.ceil(hi / step) * step + 0;
  return { min, max };
}
