/**
 * Thinning a series to the chart's pixel width: the smallest and largest value per pixel column,
 * so a single spike survives, at most ≈ 2 points per column. A live chart thins on a grid that
 * holds while runs grow (thinningEnd), so a redraw only redoes the last column and the new points.
 */
import type { PreparedSeries } from './prepared-series';
import { firstAtLeast } from './sorted';

/**
 * Indices of the points to draw from a series with ascending x: all of them when there are at
 * most 2 × `buckets`; otherwise, per bucket of x (one per pixel column of [x0, x1]), the points
 * with the smallest and the largest y in index order, plus the first and last point. The thinned
 * line covers the same pixels as the full one — a single spike survives — with ≤ 2·buckets + 2
 * points.
 */
export function minMaxIndices(
  xs: readonly number[],
  ys: readonly number[],
  x0: number,
  x1: number,
  buckets: number,
): number[] {
  const n = Math.min(xs.length, ys.length);
  const b = Math.max(1, Math.floor(buckets));
  if (n <= 2 * b) return Array.from({ length: n }, (_, i) => i);
  const out: number[] = [];
  bucketExtremes(xs, ys, x0, x1 > x0 ? b / (x1 - x0) : 0, b, 0, n, out);
  return withEnds(out, n);
}

/**
 * Appends to `out` (ascending indices) the indices of the smallest and largest y, in index
 * order, of each bucket of x over points [from, n): bucket k = ⌊(x − x0) · scale⌋, clamped to
 * [0, b − 1]. Returns the index where the last bucket begins: once more points arrive, the
 * buckets before it are final and thinning resumes there (thinnedSeries).
 */
function bucketExtremes(
  xs: readonly number[],
  ys: readonly number[],
  x0: number,
  scale: number,
  b: number,
  from: number,
  n: number,
  out: number[],
): number {
  let bucket = -1;
  let lo = -1;
  let hi = -1;
  let start = from;
  const flush = () => {
    if (lo < 0) return;
    const [a, c] = lo < hi ? [lo, hi] : [hi, lo];
    if (out.length === 0 || a > out[out.length - 1]!) out.push(a);
    if (c > out[out.length - 1]!) out.push(c);
  };
  for (let i = from; i < n; i++) {
    const k = Math.min(b - 1, Math.max(0, Math.floor((xs[i]! - x0) * scale)));
    if (k !== bucket) {
      flush();
      bucket = k;
      lo = hi = i;
      start = i;
      continue;
    }
    const y = ys[i]!;
    if (y < ys[lo]!) lo = i;
    if (y > ys[hi]!) hi = i;
  }
  flush();
  return start;
}

/** The indices with the first (0) and last (n − 1) point added where missing. */
function withEnds(inner: readonly number[], n: number): number[] {
  const out = inner[0] === 0 ? [...inner] : [0, ...inner];
  if (out[out.length - 1] !== n - 1) out.push(n - 1);
  return out;
}

/**
 * The end of the grid a live chart thins on: x0 + the span rounded up to a quarter octave
 * (2^(k/4), at most 19 % more). While a run grows inside it the buckets stay where they are, so
 * thinning only redoes the last bucket and the new points instead of every point on every
 * redraw; a bucket is then at most 1.19 pixel columns wide.
 */
export function thinningEnd(x0: number, x1: number): number {
  const span = x1 - x0;
  if (!(span > 0) || !Number.isFinite(span)) return x0 + 1;
  let q = 2 ** (Math.ceil(Math.log2(span) * 4) / 4);
  if (q < span) q *= 2 ** 0.25;
  return x0 + q;
}

/**
 * The raw and smoothed points to draw of a prepared series: all when there are at most
 * 2 × `buckets`, else min and max per bucket of [x0, end) plus both ends (see minMaxIndices).
 * Kept on the series between redraws and extended from the last bucket on when only new points
 * came, so a redraw of a growing 100k-point series costs O(new points + thinned points).
 */
export function thinnedSeries(
  p: PreparedSeries,
  x0: number,
  end: number,
  buckets: number,
): {
  raw: { x: readonly number[]; y: readonly number[] };
  smooth: { x: readonly number[]; y: readonly number[] };
} {
  const n = p.x.length;
  const b = Math.max(1, Math.floor(buckets));
  if (n <= 2 * b) return { raw: { x: p.x, y: p.y }, smooth: { x: p.x, y: p.s } };
  const key = `${x0} ${end} ${b}`;
  let t = p.thin;
  if (!t || t.key !== key || n < t.n) {
    t = { key, n: 0, raw: [], smooth: [], rawStart: 0, smoothStart: 0, drawn: undefined };
    p.thin = t;
  }
  if (t.n !== n || !t.drawn) {
    const scale = end > x0 ? b / (end - x0) : 0;
    // The last bucket may have grown: drop what it gave and redo it with the new points.
    t.raw.length = firstAtLeast(t.raw, t.rawStart);
    t.smooth.length = firstAtLeast(t.smooth, t.smoothStart);
    t.rawStart = bucketExtremes(p.x, p.y, x0, scale, b, t.rawStart, n, t.raw);
    t.smoothStart = bucketExtremes(p.x, p.s, x0, scale, b, t.smoothStart, n, t.smooth);
    t.n = n;
    const pick = (idx: readonly number[], a: readonly number[]) => idx.map((i) => a[i]!);
    const raw = withEnds(t.raw, n);
    const smooth = withEnds(t.smooth, n);
    t.drawn = {
      raw: { x: pick(raw, p.x), y: pick(raw, p.y) },
      smooth: { x: pick(smooth, p.x), y: pick(smooth, p.s) },
    };
  }
  return t.drawn;
}
