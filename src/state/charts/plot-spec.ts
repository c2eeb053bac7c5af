/**
 * What the one chart component (src/ui/charts/Plot.svelte) draws: lines, ±std bands and event
 * markers in data coordinates, on given scales with axis titles. The lessons' charts and the
 * compare view build one of these; the component turns it into a uPlot canvas, a hover readout
 * and a table of the lines, so every chart reads and behaves the same.
 */
import type { YScale } from './y-scale';

export interface PlotLine {
  /** The run (or first run of a seed group) it belongs to: data-run, selection. */
  id: string;
  label: string;
  /** A #rrggbb colour. */
  color: string;
  /** Canvas dash pattern in px; empty for a solid line. */
  dash: readonly number[];
  width: number;
  /** 0–1: a faint raw copy under a smoothed line, a dimmed run. */
  alpha: number;
  x: readonly number[];
  y: readonly number[];
  /** A line of its own in the readout and the table (false for a faint raw copy). */
  main: boolean;
  /** Points the run reported (before thinning to the chart's width). */
  points: number;
}

/** A filled band between `lo` and `hi` (a seed group's mean ± 1 std). */
export interface PlotBand {
  x: readonly number[];
  lo: readonly number[];
  hi: readonly number[];
  color: string;
}

/** A vertical mark at `x` (a live change). */
export interface PlotMarker {
  x: number;
  runId: string;
  color: string;
  title: string;
}

export interface PlotSpec {
  xTitle: string;
  yTitle: string;
  x: { min: number; max: number };
  y: YScale;
  lines: readonly PlotLine[];
  bands: readonly PlotBand[];
  markers: readonly PlotMarker[];
}

/** `#rrggbb` with opacity `alpha` as rgba(); other colours are returned as they are. */
export function withAlpha(color: string, alpha: number): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!m || alpha >= 1) return color;
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((h) => parseInt(h, 16));
  return `rgba(${r}, ${g}, ${b}, ${alpha})`;
}

/** Index of the point of ascending `xs` nearest to `x` (−1 for an empty array). */
export function nearestIndex(xs: readonly number[], x: number): number {
  if (xs.length === 0) return -1;
  let lo = 0;
  let hi = xs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && x - xs[lo - 1]! < xs[lo]! - x ? lo - 1 : lo;
}

/**
 * Tick steps for an x axis whose points all sit at whole numbers (updates, tokens): 1, 2 and 5 ×
 * 10^k. uPlot's default steps include 2.5 and fractions, which label an update axis 2.5, 7.5, ….
 */
export const WHOLE_NUMBER_STEPS: readonly number[] = Array.from({ length: 10 }, (_, k) =>
  [1, 2, 5].map((m) => m * 10 ** k),
).flat();

/** True when every line and band of `spec` has its points at whole-number x (and there are some). */
export function xIsWholeNumbers(spec: PlotSpec): boolean {
  const xs = [...spec.lines.map((l) => l.x), ...spec.bands.map((b) => b.x)];
  return xs.some((x) => x.length > 0) && xs.every((x) => x.every(Number.isInteger));
}
