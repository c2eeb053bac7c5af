/**
 * The y-scale of a seeds block's chart: one for every preset's band, so that their curves compare
 * by position. A rate (every mean in [0, 1]) keeps its whole range, 0–1, so that two presets and
 * two visits read on the same axis, and its band is clipped there (a success rate above 1 means
 * nothing); any other metric spans the bands' lowest and highest edge.
 */
import type { SeedBand } from '../compare/seed-groups';
import { extent } from './chart';

export interface BandScale {
  /** The y domain shared by every band. */
  y0: number;
  y1: number;
  /** Per band, per update: its lower and upper edge, mean ∓ std, clipped for a rate. */
  lo: number[][];
  hi: number[][];
}

export function sharedBandScale(bands: readonly SeedBand[]): BandScale {
  const rate = bands.every((band) => band.mean.every((m) => !(m < 0 || m > 1)));
  const clip = (v: number) => (rate ? Math.min(1, Math.max(0, v)) : v);
  const lo = bands.map((band) => band.mean.map((m, i) => clip(m - band.std[i]!)));
  const hi = bands.map((band) => band.mean.map((m, i) => clip(m + band.std[i]!)));
  const [y0, y1] = rate ? [0, 1] : extent([...lo, ...hi]);
  return { y0, y1, lo, hi };
}
