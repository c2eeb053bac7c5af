/**
 * A series on an axis, causally smoothed, and kept between redraws: when a live run only grew,
 * its new points are placed on the axis and smoothed by resuming the Smoother where it stopped,
 * so a redraw costs O(new points) instead of O(points). Thinning state rides along on the same
 * object (thinning.ts).
 */
import { smooth, type Smoothing } from '../../compare/smoothing';
import { pointsOnAxis, type AvailableAxis } from './axes';
import type { Series } from './run-view';

/**
 * smooth() one value at a time, so a growing series is smoothed by extending it: the same
 * arithmetic in the same order as smoothing.ts (tests check equality with smooth() on random
 * series), kept here because smoothing.ts returns whole arrays and no state to resume from.
 */
export class Smoother {
  private m = 0;
  private t = 0;
  private readonly ring: number[] = [];
  private count = 0;
  private sum = 0;

  constructor(readonly smoothing: Smoothing) {
    smooth([], smoothing); // the same range checks (RangeError naming weight or window)
  }

  push(y: number): number {
    const sm = this.smoothing;
    if (!Number.isFinite(y)) return NaN;
    if (sm.kind === 'none') return y;
    if (sm.kind === 'ema') {
      this.t += 1;
      this.m = sm.weight * this.m + (1 - sm.weight) * y;
      return this.m / (1 - sm.weight ** this.t);
    }
    const window = sm.window;
    const slot = this.count % window;
    if (this.count >= window) this.sum -= this.ring[slot]!;
    this.ring[slot] = y;
    this.sum += y;
    this.count += 1;
    const n = Math.min(this.count, window);
    if (this.count % window === 0) {
      this.sum = 0;
      for (let k = 0; k < n; k++) this.sum += this.ring[k]!;
    }
    return this.sum / n;
  }
}

/** A key for a smoothing setting ("ema 0.6"). */
function smoothingKey(s: Smoothing): string {
  return s.kind === 'ema'
    ? `ema ${s.weight}`
    : s.kind === 'moving-average'
      ? `ma ${s.window}`
      : 'none';
}

/** A series on an axis, smoothed, with its thinning (see preparedSeries, thinnedSeries). */
export interface PreparedSeries {
  /** Points of the series seen, and the update of its last one. */
  n: number;
  lastStep: number;
  axisKey: string;
  smoothingKey: string;
  /** x on the axis, raw y and smoothed y of the points with finite x and y. */
  x: number[];
  y: number[];
  s: number[];
  smoother: Smoother;
  thin?: {
    key: string;
    n: number;
    raw: number[];
    smooth: number[];
    rawStart: number;
    smoothStart: number;
    drawn: { raw: { x: number[]; y: number[] }; smooth: { x: number[]; y: number[] } } | undefined;
  };
}

/** Keyed by the series' y array, which the lab grows in place (runs.svelte.ts receive()). */
const preparedCache = new WeakMap<object, PreparedSeries>();

/**
 * The series on the axis and smoothed — from the cache when nothing changed, extended by the new
 * points when the series only grew (same array, earlier points untouched: the last point seen is
 * still where it was), recomputed otherwise (the lab merged points, the axis or smoothing
 * changed). A live run redraws in O(new points) instead of O(points).
 */
export function preparedSeries(
  series: Series,
  axis: AvailableAxis,
  smoothing: Smoothing,
): PreparedSeries {
  const n = series.x.length;
  const lastStep = series.x[n - 1] ?? NaN;
  const sKey = smoothingKey(smoothing);
  const hit = preparedCache.get(series.y);
  if (hit && hit.axisKey === axis.key && hit.smoothingKey === sKey) {
    if (hit.n === n && hit.lastStep === lastStep) return hit;
    if (axis.stable && n > hit.n && series.x[hit.n - 1] === hit.lastStep) {
      const more = pointsOnAxis(series, axis, hit.n);
      for (let i = 0; i < more.x.length; i++) {
        hit.x.push(more.x[i]!);
        hit.y.push(more.y[i]!);
        hit.s.push(hit.smoother.push(more.y[i]!));
      }
      hit.n = n;
      hit.lastStep = lastStep;
      return hit;
    }
  }
  const { x, y } = pointsOnAxis(series, axis);
  const smoother = new Smoother(smoothing);
  const fresh: PreparedSeries = {
    n,
    lastStep,
    axisKey: axis.key,
    smoothingKey: sKey,
    x,
    y,
    s: y.map((v) => smoother.push(v)),
    smoother,
  };
  preparedCache.set(series.y, fresh);
  return fresh;
}
