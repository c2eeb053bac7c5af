/**
 * What a chart is built from and what it draws: the runs and seed groups handed to chartModel
 * (ChartRun, ChartEntry, ChartInput) and the model it returns in pixel coordinates (ChartModel,
 * with its lines, markers and ticks). Apart from chart-model.ts so that describe.ts can name
 * ChartRun without importing the model that imports it.
 */
import type { Smoothing } from '../../compare/smoothing';
import type { XAxis } from '../../compare/x-axis';
import type { RunEvent } from '../../worker/run-protocol';
import type { RunAxis } from './axes';
import type { Series } from './run-view';

/** One run as a chart reads it. */
export interface ChartRun {
  id: string;
  label: string;
  color: string;
  dash: string;
  series: Readonly<Record<string, Series>>;
  /** The run's x on the chart's axis (runAxis). */
  axis: RunAxis;
  events: readonly RunEvent[];
}

/** One line of a chart: a run alone, or runs equal but for the seed (drawn as mean and band). */
export interface ChartEntry {
  runs: readonly ChartRun[];
  /** 'seed' when the runs have distinct seeds, else 'run' (the band caption's unit). */
  unit?: 'seed' | 'run';
}

export interface ChartInput {
  metric: string;
  axis: XAxis;
  entries: readonly ChartEntry[];
  smoothing: Smoothing;
  /** Chart size in CSS pixels (the SVG's viewBox, so one unit is one pixel). */
  width: number;
  height: number;
  /** Y range from the 1st–99th percentile of the drawn points instead of their full range. */
  ignoreOutliers: boolean;
}

export interface ChartMarker {
  x: number;
  runId: string;
  color: string;
  title: string;
}

export interface ChartLine {
  /** The first run's id (data-run in the DOM, for tests and selection). */
  id: string;
  runIds: string[];
  label: string;
  color: string;
  dash: string;
  /** Points the runs reported on this axis (before thinning). */
  points: number;
  /** Faint raw curves, one path per run. */
  raw: string[];
  /** The smoothed curve, or the seed group's mean of smoothed curves. */
  smooth: string;
  /** The ±1 std band of a seed group (closed path), and its caption. */
  band?: string;
  caption?: string;
}

export interface Tick {
  value: number;
  at: number;
  label: string;
}

export interface ChartModel {
  metric: string;
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  lines: ChartLine[];
  markers: ChartMarker[];
  xTicks: Tick[];
  yTicks: Tick[];
  /** Runs with this metric that are not drawn, and why (listed under the chart). */
  excluded: { label: string; reason: string }[];
  /** What to know about a drawn run's x values (partial or approximate axis). */
  notes: string[];
  /** The chart in words (a screen reader's view of it). */
  summary: string;
}
