/**
 * Binary search over ascending numbers, shared by the x-axes of long runs (axes.ts: the block an
 * update falls in) and by thinning (thinning.ts: where to resume once more points arrive).
 */

/** The first index i with sorted[i] ≥ value (sorted.length when none). */
export function firstAtLeast(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
