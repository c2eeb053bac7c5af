/**
 * Each run's x values on the chosen x-axis (updates, environment steps, tokens, training time),
 * computed with src/compare/x-axis.ts and memoised per run. Runs the lab thinned past MAX_POINTS
 * are read in blocks, so the work is O(points), not O(updates); the axis says whether its values
 * stay put as the run grows, which lets prepared-series.ts extend instead of recompute.
 */
import { PROPOSED_METRICS, xValues, type XAxis } from '../../compare/x-axis';
import { MAX_POINTS } from '../runs.svelte';
import { runRecord, type RunView, type Series } from './run-view';
import { firstAtLeast } from './sorted';

/** Metrics x-axis.ts derives axes from; only these are aligned per update (see runAxis). */
const AXIS_SOURCES: readonly string[] = [
  'charts/env_steps',
  'charts/episodic_length',
  'charts/SPS',
  'response_length/mean',
  'perf/tokens_per_s',
  'dynamic_sampling/rounds',
  PROPOSED_METRICS.generatedTokens,
  PROPOSED_METRICS.stepSeconds,
];

/** Per-update amounts that x-axis.ts sums into running totals (steps, tokens, seconds). */
const SUMMED_SOURCES = new Set([
  'charts/episodic_length',
  'response_length/mean',
  PROPOSED_METRICS.generatedTokens,
  PROPOSED_METRICS.stepSeconds,
]);

/** A run's x on one axis, readable at any update. */
export type RunAxis =
  | {
      ok: true;
      axis: XAxis;
      /** x at update `step` (NaN where unknown). */
      at: (step: number) => number;
      source: string;
      note?: string;
      /**
       * Same key: x of an update is computed the same way. With `stable`, updates already seen
       * keep their x as the run grows (running totals only add at the end), so a series' points
       * can be extended instead of recomputed (preparedSeries).
       */
      key: string;
      stable: boolean;
    }
  | { ok: false; axis: XAxis; reason: string };

/** A run's x on an axis that it has. */
export type AvailableAxis = Extract<RunAxis, { ok: true }>;

/** The update axis (one object, so caches keyed on it hit). */
export const UPDATE_AXIS: AvailableAxis = {
  ok: true,
  axis: 'update',
  at: (step) => step,
  source: 'update number',
  key: 'update',
  stable: true,
};

/**
 * The run's x on `axis`, or why it has none, computed from x-axis.ts's xValues.
 *
 * A run of at most MAX_POINTS updates is aligned per update, exactly. A longer one is read in
 * blocks — one block per update the lab kept (past MAX_POINTS it merges neighbouring points:
 * halveSeries, the later update and the mean of the two values), a block covering the updates
 * since the previous kept one — so the work is O(points), not O(updates): a Q-learning run does
 * thousands of episodes a second, and aligning 5M updates takes seconds. Per-update amounts
 * (episode lengths, tokens, seconds) count once per update in the block (mean × span), so
 * running totals at the kept updates are right as long as the lab merged points of equal spans;
 * it sometimes merges unequal ones, so the note calls those totals approximate. A series the lab
 * never thinned (every update kept) comes out exact either way.
 */
export function runAxis(run: RunView, axis: XAxis): RunAxis {
  if (axis === 'update') return UPDATE_AXIS;
  // Runs that did not change since the last redraw (paused, stored) keep their axis object.
  let memo = axisMemo.get(run.series);
  if (!memo || memo.events !== run.events || memo.spec !== run.spec) {
    memo = { events: run.events, spec: run.spec, axes: {} };
    axisMemo.set(run.series, memo);
  }
  return (memo.axes[axis] ??= computeAxis(run, axis));
}

const axisMemo = new WeakMap<
  object,
  { events: RunView['events']; spec: RunView['spec']; axes: Partial<Record<XAxis, RunAxis>> }
>();

function computeAxis(run: RunView, axis: XAxis): RunAxis {
  let last = 0;
  for (const name of AXIS_SOURCES) last = Math.max(last, run.series[name]?.x.at(-1) ?? 0);
  if (last <= MAX_POINTS || everyUpdateKept(run, last)) {
    const result = xValues(runRecord(run, AXIS_SOURCES), axis);
    if (!result.ok) return result;
    const { values, source, note } = result;
    return {
      ok: true,
      axis,
      at: (step) => values[step - 1] ?? NaN,
      source,
      ...(note ? { note } : {}),
      key: `${axis} per update: ${source}`,
      stable: true,
    };
  }
  return blockAxis(run, axis);
}

/**
 * Whether each axis source holds every update from 1 to `last` (an imported run, which the lab
 * never merged): then the per-update path is exact and costs O(updates) with plain arrays,
 * where the block path would build sets and maps of 100k updates.
 */
function everyUpdateKept(run: RunView, last: number): boolean {
  return AXIS_SOURCES.every((name) => {
    const x = run.series[name]?.x;
    return !x || x.length === 0 || (x.length === last && x[0] === 1 && x[last - 1] === last);
  });
}

/** runAxis for long runs: one pseudo-update per kept update (see runAxis). */
function blockAxis(run: RunView, axis: XAxis): RunAxis {
  const present = AXIS_SOURCES.filter((name) => (run.series[name]?.x.length ?? 0) > 0);
  const ends = [...new Set(present.flatMap((name) => run.series[name]!.x))]
    .filter((x) => Number.isInteger(x) && x >= 1)
    .sort((a, b) => a - b);
  const blockOf = new Map(ends.map((end, b) => [end, b]));
  const metrics: Record<string, number[]> = {};
  for (const name of present) {
    const { x, y } = run.series[name]!;
    const values = new Array<number>(ends.length).fill(NaN);
    for (let i = 0; i < x.length; i++) {
      const b = blockOf.get(x[i]!);
      if (b === undefined) continue;
      const span = ends[b]! - (b > 0 ? ends[b - 1]! : 0);
      values[b] = SUMMED_SOURCES.has(name) ? y[i]! * span : y[i]!;
    }
    metrics[name] = values;
  }
  // An event applies from the block holding its update on (1-based, as steps are).
  const events = run.events.map((e) => ({ ...e, step: firstAtLeast(ends, e.step) + 1 }));
  const result = xValues({ ...runRecord(run), metrics, events }, axis);
  // Messages of xValues count blocks as updates: name the real update each block ends at.
  const real = (text: string) =>
    text.replace(/\bupdate (\d+)/g, (_, b: string) => `update ${ends[Number(b) - 1] ?? b}`);
  if (!result.ok) return { ok: false, axis, reason: real(result.reason) };
  const { values, source } = result;
  const merged = ends.length < ends[ends.length - 1]!;
  const notes = [
    ...(result.note ? [real(result.note)] : []),
    ...(merged
      ? [
          `approximate: the lab merged older updates into means to keep at most ${MAX_POINTS} ` +
            'points, so totals over them are estimates',
        ]
      : []),
  ];
  return {
    ok: true,
    axis,
    at: (step) => {
      // Kept updates are exact; an update between two kept ones (a marker) is interpolated.
      const b = firstAtLeast(ends, step);
      if (b >= ends.length) return NaN;
      if (ends[b] === step) return values[b] ?? NaN;
      const x0 = b > 0 ? ends[b - 1]! : 0;
      const v0 = b > 0 ? values[b - 1]! : 0;
      return v0 + ((values[b]! - v0) * (step - x0)) / (ends[b]! - x0);
    },
    source,
    ...(notes.length > 0 ? { note: notes.join('; ') } : {}),
    // Merging moves the x of old updates: recompute, never extend.
    key: `${axis} in blocks: ${source}`,
    stable: false,
  };
}

/**
 * The series' points on an axis: x = the axis value at the point's update; points whose x or y
 * is not finite are left out (smoothing skips non-finite values anyway, so dropping them changes
 * no smoothed value).
 */
export function pointsOnAxis(
  series: Series,
  axis: RunAxis,
  from = 0,
): { x: number[]; y: number[] } {
  const x: number[] = [];
  const y: number[] = [];
  if (!axis.ok) return { x, y };
  for (let i = from; i < series.x.length; i++) {
    const at = axis.at(series.x[i]!);
    const value = series.y[i]!;
    if (Number.isFinite(at) && Number.isFinite(value)) {
      x.push(at);
      y.push(value);
    }
  }
  return { x, y };
}
