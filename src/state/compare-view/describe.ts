/**
 * The compare view in words: the x-axis and smoothing as phrases, a curve's trend, short names of
 * runs and seed groups, and the axis notes shown once for all charts. Chart summaries (what a
 * screen reader hears of a chart) are built from these in chart-model.ts.
 */
import type { Smoothing } from '../../compare/smoothing';
import type { XAxis } from '../../compare/x-axis';
import { formatTick } from '../chart';
import type { ChartRun } from './chart-types';

/** How the x-axis reads in a sentence: "reward/mean over environment steps". */
export const X_AXIS_PHRASES: Record<XAxis, string> = {
  update: 'updates',
  env_steps: 'environment steps',
  tokens: 'sampled tokens',
  wall_time: 'training time',
};

/** The smoothing as words: "debiased EMA, weight 0.6". */
export function describeSmoothing(smoothing: Smoothing): string {
  switch (smoothing.kind) {
    case 'none':
      return 'not smoothed';
    case 'ema':
      return `debiased EMA, weight ${smoothing.weight}`;
    case 'moving-average':
      return `moving average of ${smoothing.window} ${smoothing.window === 1 ? 'point' : 'points'}`;
  }
}

/**
 * A curve in words: "rises from 0.12 to 0.85", "falls from …", or "stays near 0.5" when the
 * change is at most 5 % of the range the raw values spanned (lo … hi).
 */
export function describeTrend(first: number, last: number, lo: number, hi: number): string {
  const span = hi - lo;
  if (!(span > 0) || Math.abs(last - first) <= 0.05 * span) return `stays near ${formatTick(last)}`;
  const verb = last > first ? 'rises' : 'falls';
  return `${verb} from ${formatTick(first)} to ${formatTick(last)}`;
}

/**
 * What to know about the runs' x values on the chosen axis, once for all charts: identical notes
 * of several runs merged ("runs #1 and #2: approximate: …").
 */
export function axisNotes(runs: readonly Pick<ChartRun, 'label' | 'axis'>[]): string[] {
  const byNote: Record<string, string[]> = {};
  for (const run of runs) {
    if (run.axis.ok && run.axis.note) (byNote[run.axis.note] ??= []).push(shortName(run.label));
  }
  return Object.entries(byNote).map(([note, names]) =>
    names.length === 1
      ? `${names[0]}: ${note}`
      : `runs ${listOf(names.map((n) => n.replace(/^run /, '')))}: ${note}`,
  );
}

/** "run #3" from a label such as "#3 q-learning on cliffwalking, seed 1". */
export function shortName(label: string): string {
  const first = label.split(' ')[0] ?? '';
  return /^#\d+$/.test(first) ? `run ${first}` : label;
}

/** "a", "a and b", "a, b and c". */

/** "runs #1, #2: q-learning on cliffwalking, seeds 1, 2" — what a seed group's line stands for. */
export function groupLabel(runs: readonly Pick<ChartRun, 'label'>[]): string {
  const names = runs.map((r) => r.label.split(' ')[0] ?? r.label);
  const rest = runs[0]!.label
    .split(' ')
    .slice(1)
    .join(' ')
    .replace(/, seed \d+.*$/, '');
  const seeds = runs.map((r) => /, seed (\d+)/.exec(r.label)?.[1] ?? '?');
  return `runs ${names.join(', ')}: ${rest}, seeds ${seeds.join(', ')}`;
}

export function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
