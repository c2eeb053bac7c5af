/**
 * Pure helpers of the charts: value extents, tick labels, and the lab's halving of long series.
 * Scales are chosen in charts/y-scale.ts; uPlot draws (src/ui/charts/).
 */

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
