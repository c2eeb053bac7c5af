/** Pure helpers of the metric chart: smoothing, thinning, scales and SVG paths. */

// The smoothers live with the compare view's helpers; re-exported for the chart component.
export { debiasedEma } from '../compare/smoothing';

/** Indices of at most `max` evenly spread points, the first and last always kept. */
export function thinIndices(length: number, max: number): number[] {
  if (length <= max) return Array.from({ length }, (_, i) => i);
  const stride = (length - 1) / (max - 1);
  return Array.from({ length: max }, (_, k) => Math.round(k * stride));
}

/** [min, max] of the finite values over all arrays; a flat or empty range is widened. */
export function extent(arrays: readonly (readonly number[])[]): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const values of arrays) {
    for (const v of values) {
      if (!Number.isFinite(v)) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (lo > hi) return [0, 1];
  if (lo === hi) return [lo - 0.5, hi + 0.5];
  return [lo, hi];
}

/**
 * Like extent(), but from the `q` and 1 − `q` quantiles of the finite values, so a few early
 * outliers (a first episode of −2000 on CliffWalking) do not flatten the rest of the curve.
 */
export function robustExtent(arrays: readonly (readonly number[])[], q = 0.01): [number, number] {
  const all = arrays
    .flat()
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  if (all.length < 20) return extent([all]);
  const at = (p: number) => all[Math.min(all.length - 1, Math.floor(p * (all.length - 1)))]!;
  return extent([[at(q), at(1 - q)]]);
}

/** A linear map from [d0, d1] onto [r0, r1]. */
export function linear(d0: number, d1: number, r0: number, r1: number): (v: number) => number {
  const k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
  return (v) => r0 + (v - d0) * k;
}

/** "M x y L x y …", starting a new sub-path after every non-finite value. */
export function linePath(
  xs: readonly number[],
  ys: readonly number[],
  sx: (v: number) => number,
  sy: (v: number) => number,
): string {
  let path = '';
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i]!;
    if (!Number.isFinite(y)) {
      pen = false;
      continue;
    }
    path += `${pen ? 'L' : 'M'}${sx(xs[i]!).toFixed(1)} ${sy(y).toFixed(1)}`;
    pen = true;
  }
  return path;
}

/** About `count` round tick values covering [lo, hi] (steps of 1, 2 or 5 × 10^k). */
export function ticks(lo: number, hi: number, count = 5): number[] {
  const raw = (hi - lo) / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return [lo];
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? raw;
  const first = Math.ceil(lo / step) * step;
  // By index, not by `v += step`: a step below the float resolution of v (a nearly flat series
  // at a large value) would never advance v.
  const n = Math.floor((hi - first) / step + 1e-9) + 1;
  if (!(n >= 1) || n > 1000 || first + step === first) return [lo];
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const v = first + i * step;
    const tick = Math.abs(v) < step * 1e-9 ? 0 : v;
    // Near float resolution two indices can round to one value: keep ticks distinct (they key lists).
    if (out.length === 0 || tick !== out[out.length - 1]) out.push(tick);
  }
  return out;
}

/** A short label for an axis value: 1.2k, 0.05, 3e-5. */
export function formatTick(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e6) return `${Number((v / 1e6).toPrecision(3))}M`;
  if (a >= 1e4) return `${Number((v / 1000).toPrecision(3))}k`;
  if (a < 1e-3) return v.toExponential(0);
  if (a >= 1) return String(Number(v.toFixed(2)));
  return String(Number(v.toPrecision(3)));
}

/**
 * Halves a long series in place by merging neighbouring points (x of the later one, mean of the
 * finite y values), so a run of millions of updates keeps a bounded, evenly spread history.
 */
export function halveSeries(x: number[], y: number[]): void {
  const n = Math.floor(x.length / 2);
  for (let i = 0; i < n; i++) {
    const a = y[2 * i]!;
    const b = y[2 * i + 1]!;
    x[i] = x[2 * i + 1]!;
    y[i] = Number.isFinite(a) && Number.isFinite(b) ? (a + b) / 2 : Number.isFinite(a) ? a : b;
  }
  // An odd last point stays as it is, after the merged ones.
  if (x.length % 2 === 1) {
    x[n] = x[x.length - 1]!;
    y[n] = y[y.length - 1]!;
    x.length = n + 1;
    y.length = n + 1;
  } else {
    x.length = n;
    y.length = n;
  }
}
