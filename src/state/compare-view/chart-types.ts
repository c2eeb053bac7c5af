/**
 * What a chart is built from and what it draws: the runs and seed groups handed to chartModel
 * (ChartRun, ChartEntry, ChartInput) and the model it returns (ChartModel: the PlotSpec the chart
 * component draws, with the lines' runs, captions and a summary). Apart from chart-model.ts so that describe.ts can name
 * ChartRun without importing the model that imports it.
 */
import type { Smoothing } from '../../compare/smoothing';
import type { PlotSpec } from '../charts/plot-spec';
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
  /** Width of the plot in CSS pixels: long series are thinned to about two points per column. */
  width: number;
  /** Y range from the 1st–99th percentile of the drawn points instead of their full range. */
  ignoreOutliers: boolean;
}

/** One line of a chart: a run alone, or runs equal but for the seed (drawn as mean and band). */
export interface ChartLine {
  /** The first run's id (data-run in the DOM, for tests and selection). */
  id: string;
  runIds: string[];
  label: string;
  color: string;
  /** Points the runs reported on this axis (before thinning). */
  points: number;
  /** The caption of a seed group's ±1 std band. */
  caption?: string;
}

export interface ChartModel {
  metric: string;
  /** What the chart component draws: faint raw and bold smoothed lines, bands and markers. */
  spec: PlotSpec;
  lines: ChartLine[];
  /** Runs with this metric that are not drawn, and why (listed under the chart). */
  excluded: { label: string; reason: string }[];
  /** What to know about a drawn run's x values (partial or approximate axis). */
  notes: string[];
  /** The chart in words (a screen reader's view of it). */
  summary: string;
}
