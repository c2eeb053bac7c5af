/**
 * Putting the runs of a seed group on common x values, so their mean and spread can be taken
 * point by point: linear interpolation of a run at given x, and the grid the band is evaluated on.
 */

/**
 * Linear interpolation of (xs, ys) at each of `grid` (both ascending): NaN outside [xs[0],
 * xs[last]]. One pass over both arrays.
 */
export function resample(
  xs: readonly number[],
  ys: readonly number[],
  grid: readonly number[],
): number[] {
  const out = new Array<number>(grid.length);
  const last = xs.length - 1;
  let j = 0;
  for (let g = 0; g < grid.length; g++) {
    const at = grid[g]!;
    if (last < 0 || at < xs[0]! || at > xs[last]!) {
      out[g] = NaN;
      continue;
    }
    while (j < last && xs[j + 1]! < at) j++;
    const xa = xs[j]!;
    if (j === last || at === xa) {
      out[g] = ys[j]!;
      continue;
    }
    const xb = xs[j + 1]!;
    out[g] = at === xb ? ys[j + 1]! : ys[j]! + ((ys[j + 1]! - ys[j]!) * (at - xa)) / (xb - xa);
  }
  return out;
}

/**
 * Where a seed band is evaluated over [start, end]: the reference run's own x values there when
 * there are at most `points` of them (exact on the update axis), else `points` evenly spaced x;
 * the two ends when the reference has no point inside.
 */
export function bandGrid(
  reference: readonly number[],
  start: number,
  end: number,
  points: number,
): number[] {
  const inside = reference.filter((x) => x >= start && x <= end);
  if (inside.length === 0) return start === end ? [start] : [start, end];
  if (inside.length <= points) return inside;
  const k = Math.max(2, Math.floor(points));
  return Array.from({ length: k }, (_, i) =>
    i === k - 1 ? end : start + ((end - start) * i) / (k - 1),
  );
}
