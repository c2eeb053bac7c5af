/**
 * The lab's compare view as pure functions: which charts to draw, each run's points on the chosen
 * x-axis, causal smoothing, thinning to the chart's pixel width (min and max per pixel column, so
 * spikes survive), seed-group bands, live-change markers, a text summary per chart and the rows of
 * the final-metrics table. The Svelte components in src/ui/lab/compare/ only render what these
 * return, so everything here is tested without a DOM.
 *
 * Cost: smoothing is O(points) per series (a causal smoother has to see every point); everything
 * after it — extents, band, paths, summary — works on the thinned points, at most ≈ 2 per pixel
 * column per series, so a 100k-point series costs no more to draw than a 1k-point one.
 */
import {
  configDiff,
  DEFAULT_FINAL_WINDOW,
  finalValue,
  type FinalValue,
} from '../compare/final-table';
import { alignSeries, configAt, type CompareCatalog, type RunRecord } from '../compare/run-record';
import { seedBand } from '../compare/seed-groups';
import { MAX_WINDOW, smooth, type Smoothing } from '../compare/smoothing';
import { PROPOSED_METRICS, xValues, type XAxis } from '../compare/x-axis';
import { extent, formatTick, linePath, linear, robustExtent, ticks } from './chart';
import { MAX_POINTS } from './runs.svelte';
import type { RunEvent, RunSpec, Settings } from '../worker/run-protocol';

/** A metric's history as the lab keeps it: update numbers and values, only updates that logged it. */
export interface Series {
  x: readonly number[];
  y: readonly number[];
}

// ---------------------------------------------------------------------------------------------
// Colours and dash styles

export { COLORBLIND_SAFE_PALETTE } from './palette';

/** SVG stroke-dasharray per style; run k (0-based, creation order) gets style k mod 4. */
export const DASH_STYLES = [
  { name: 'solid', dash: '' },
  { name: 'dashed', dash: '7 4' },
  { name: 'dotted', dash: '2 3' },
  { name: 'dash-dot', dash: '9 3 2 3' },
] as const;

/**
 * The dash style of the run created `index`-th (0-based). With 6 colours and 4 dash styles the
 * first 12 runs all differ in colour, dash or both (lcm(6, 4) = 12).
 */
export function dashStyle(index: number): (typeof DASH_STYLES)[number] {
  const k = Number.isInteger(index) && index >= 0 ? index % DASH_STYLES.length : 0;
  return DASH_STYLES[k]!;
}

// ---------------------------------------------------------------------------------------------
// Which charts

/**
 * The small multiples, in this order, each drawn when any run logged it. Alternatives for other
 * algorithm families sit next to their counterpart (CleanRL's names for the environment PPO), and
 * each is its own chart: two different metrics never share an axis.
 */
export const KEY_METRICS: readonly { metric: string; title: string }[] = [
  { metric: 'reward/mean', title: 'Reward' },
  { metric: 'charts/episodic_return', title: 'Episode return' },
  { metric: 'charts/episodic_length', title: 'Episode length' },
  { metric: 'reward/accuracy', title: 'Success rate' },
  { metric: 'actor/entropy', title: 'Policy entropy' },
  { metric: 'losses/entropy', title: 'Policy entropy' },
  { metric: 'actor/ppo_kl', title: 'KL to the rollout policy' },
  { metric: 'actor/kl_loss', title: 'KL to the reference' },
  { metric: 'losses/approx_kl', title: 'Approximate KL' },
  { metric: 'actor/pg_clipfrac', title: 'Clip fraction' },
  { metric: 'losses/clipfrac', title: 'Clip fraction' },
  { metric: 'frac_reward_zero_std', title: 'Groups with zero reward std' },
  { metric: 'response_length/mean', title: 'Response length' },
  { metric: 'critic/vf_loss', title: 'Value loss' },
  { metric: 'losses/value_loss', title: 'Value loss' },
  { metric: 'perf/tokens_per_s', title: 'Throughput (tokens/s)' },
  { metric: 'tools/call_frequency', title: 'Tool calls per episode' },
];

const KEY_NAMES = new Set(KEY_METRICS.map((k) => k.metric));

/** A chart's heading: the key metric's title, or the metric name for any other metric. */
export function metricTitle(metric: string): string {
  return KEY_METRICS.find((k) => k.metric === metric)?.title ?? metric;
}

/**
 * The charts to draw: the key metrics some run logged, in KEY_METRICS order, then `extra` (the
 * "more metrics" picker) when some run logged it and it is not already there.
 */
export function chartMetrics(present: ReadonlySet<string>, extra?: string): string[] {
  const out = KEY_METRICS.map((k) => k.metric).filter((m) => present.has(m));
  if (extra && present.has(extra) && !out.includes(extra)) out.push(extra);
  return out;
}

/** The picker's choices: every logged metric that has no chart of its own, sorted. */
export function moreMetrics(present: ReadonlySet<string>): string[] {
  return [...present].filter((m) => !KEY_NAMES.has(m)).sort();
}

// ---------------------------------------------------------------------------------------------
// Runs as compare records, and their x-axes

/** What the compare view reads of a lab run (a LabRun, or a plain snapshot of one). */
export interface RunView {
  id: string;
  label: string;
  color: string;
  spec: Pick<RunSpec, 'algo' | 'env' | 'task' | 'taskOptions' | 'seed' | 'config' | 'sftSteps'>;
  series: Readonly<Record<string, Series>>;
  events: readonly RunEvent[];
}

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

/**
 * A run as the compare helpers' RunRecord. The config is the one the run was created with, plus
 * its task options as 'task.<name>' and its warm-up as 'sftSteps', so runs that differ only there
 * are neither grouped as seeds of one experiment nor shown as equal in the table. `metrics` holds
 * only the names given (aligning every metric of every run on every redraw would be wasted work).
 */
export function runRecord(run: RunView, metrics: readonly string[] = []): RunRecord {
  const config: Settings = { ...run.spec.config };
  for (const [key, value] of Object.entries(run.spec.taskOptions ?? {})) {
    config[`task.${key}`] = value;
  }
  if (run.spec.sftSteps !== undefined) config.sftSteps = run.spec.sftSteps;
  const picked: Record<string, Series> = {};
  for (const name of metrics) {
    const s = run.series[name];
    if (s) picked[name] = s;
  }
  return {
    algorithm: run.spec.algo,
    task: run.spec.env ?? run.spec.task ?? '',
    seed: run.spec.seed,
    config,
    metrics: alignSeries(picked),
    events: [...run.events],
  };
}

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
  if (last <= MAX_POINTS) {
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

/** The first index i with sorted[i] ≥ value (sorted.length when none). */
function firstAtLeast(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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

// ---------------------------------------------------------------------------------------------
// Thinning and resampling

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

// ---------------------------------------------------------------------------------------------
// Text

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
function listOf(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** Largest window the form accepts (longer windows flatten any run the lab trains). */
export const MAX_WINDOW_INPUT = Math.min(1000, MAX_WINDOW);

/**
 * The moving-average window from the form (a number field gives a number, or null when empty):
 * a whole number in [1, MAX_WINDOW_INPUT], or the reason it is not one (shown by the field; the
 * charts keep the last valid window meanwhile).
 */
export function parseWindow(
  value: unknown,
): { ok: true; value: number } | { ok: false; error: string } {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= MAX_WINDOW_INPUT) return { ok: true, value: n };
  const got =
    value === null || value === undefined || (typeof value === 'string' && value.trim() === '')
      ? 'nothing'
      : typeof value === 'string'
        ? JSON.stringify(value)
        : String(value);
  return {
    ok: false,
    error: `window must be a whole number in [1, ${MAX_WINDOW_INPUT}], got ${got}`,
  };
}

// ---------------------------------------------------------------------------------------------
// The chart model

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

const MARGIN = { left: 52, right: 12, top: 10, bottom: 28 };

interface Member {
  run: ChartRun;
  x: readonly number[];
  y: readonly number[];
  s: readonly number[];
  prepared: PreparedSeries;
}

/** Everything a chart draws, in its own pixel coordinates. */
export function chartModel(input: ChartInput): ChartModel {
  const { metric, smoothing, width, height } = input;
  const plot = {
    left: MARGIN.left,
    right: Math.max(MARGIN.left + 1, width - MARGIN.right),
    top: MARGIN.top,
    bottom: Math.max(MARGIN.top + 1, height - MARGIN.bottom),
  };
  const buckets = Math.max(1, Math.round(plot.right - plot.left));
  const excluded: ChartModel['excluded'] = [];
  const notes: string[] = [];
  const silent: string[] = [];

  // 1. Each run's points on the axis, smoothed over all of them (causal: O(points)).
  const entries: { entry: ChartEntry; members: Member[] }[] = [];
  for (const entry of input.entries) {
    const members: Member[] = [];
    for (const run of entry.runs) {
      const series = run.series[metric];
      if (!series || series.x.length === 0) {
        silent.push(shortName(run.label));
        continue;
      }
      if (!run.axis.ok) {
        excluded.push({ label: run.label, reason: run.axis.reason });
        continue;
      }
      const prepared = preparedSeries(series, run.axis, smoothing);
      if (prepared.x.length === 0) {
        excluded.push({
          label: run.label,
          reason: `no update that logged ${metric} has a known ${X_AXIS_PHRASES[input.axis]} value`,
        });
        continue;
      }
      if (run.axis.note) notes.push(`${shortName(run.label)}: ${run.axis.note}`);
      members.push({ run, x: prepared.x, y: prepared.y, s: prepared.s, prepared });
    }
    if (members.length > 0) entries.push({ entry, members });
  }

  // 2. Seed groups: mean and band over the x range all their runs cover (a group whose runs do
  // not overlap at all is drawn run by run).
  interface Unit {
    entry: ChartEntry;
    members: Member[];
    band?: { x: number[]; mean: number[]; lo: number[]; hi: number[]; caption: string };
  }
  const units: Unit[] = [];
  for (const { entry, members } of entries) {
    const band =
      members.length > 1
        ? seedGroupBand(members, entry.unit ?? 'seed', buckets, input.axis)
        : undefined;
    if (band) units.push({ entry, members, band });
    else for (const m of members) units.push({ entry, members: [m] });
  }

  // 3. The x range: from 0 (or the smallest x) to the last x drawn (a group ends with its band).
  let x0 = 0;
  let x1 = -Infinity;
  for (const { members, band } of units) {
    const xs = band ? band.x : members[0]!.x;
    x0 = Math.min(x0, xs[0]!);
    x1 = Math.max(x1, xs[xs.length - 1]!);
  }
  if (!(x1 > x0)) x1 = x0 + 1;

  // Thinned points per run (≤ 2 per pixel column) on a grid that holds while runs grow
  // (thinningEnd), extended between redraws.
  const end = thinningEnd(x0, x1);
  const thinned = (m: Member) => thinnedSeries(m.prepared, x0, end, buckets);
  const drawn = units.map((u) => ({
    ...u,
    raw: u.members.map((m) => thinned(m).raw),
    line: u.band ? { x: u.band.x, y: u.band.mean } : thinned(u.members[0]!).smooth,
  }));

  // 4. The y range from the drawn points (thinning keeps every column's extremes). A seed group
  // draws its mean and band only: the members' raw curves would bury the band (ungroup to see
  // them), so they do not set the range either.
  const ys: (readonly number[])[] = [];
  for (const d of drawn) {
    if (!d.band) for (const r of d.raw) ys.push(r.y);
    ys.push(d.line.y);
    if (d.band) ys.push(d.band.lo, d.band.hi);
  }
  const [y0, y1] = (input.ignoreOutliers ? robustExtent : extent)(ys);
  const sx = linear(x0, x1, plot.left, plot.right);
  const sy = linear(y0, y1, plot.bottom, plot.top);

  const lines: ChartLine[] = drawn.map((d) => {
    const runs = d.members.map((m) => m.run);
    const first = runs[0]!;
    const line: ChartLine = {
      id: first.id,
      runIds: runs.map((r) => r.id),
      label: runs.length > 1 ? groupLabel(runs) : first.label,
      color: first.color,
      dash: first.dash,
      points: d.members.reduce((n, m) => n + m.x.length, 0),
      raw: smoothing.kind === 'none' || d.band ? [] : d.raw.map((r) => linePath(r.x, r.y, sx, sy)),
      smooth: linePath(d.line.x, d.line.y, sx, sy),
    };
    if (d.band) {
      line.band = bandPath(d.band.x, d.band.lo, d.band.hi, sx, sy);
      line.caption = d.band.caption;
    }
    return line;
  });

  // 5. Live changes, at the x of the update they first applied to.
  const markers: ChartMarker[] = [];
  for (const d of drawn) {
    const run = d.members[0]!.run;
    for (const event of run.events) {
      if (event.kind !== 'hyperparams' || !run.axis.ok) continue;
      const at = run.axis.at(event.step);
      if (!Number.isFinite(at) || at < x0 || at > x1) continue;
      const changes = Object.entries(event.changes)
        .map(([k, v]) => `${k} → ${String(v)}`)
        .join(', ');
      markers.push({
        x: sx(at),
        runId: run.id,
        color: run.color,
        title: `${shortName(run.label)}: ${changes} at update ${event.step}`,
      });
    }
  }

  const xTicks = ticks(x0, x1, Math.max(2, Math.floor((plot.right - plot.left) / 90))).map(
    (value) => ({ value, at: sx(value), label: formatTick(value) }),
  );
  const yTicks = ticks(y0, y1, Math.max(2, Math.floor((plot.bottom - plot.top) / 40))).map(
    (value) => ({ value, at: sy(value), label: formatTick(value) }),
  );

  return {
    metric,
    width,
    height,
    plot,
    lines,
    markers,
    xTicks,
    yTicks,
    excluded,
    notes,
    summary: chartSummary(metric, input.axis, smoothing, drawn, excluded, silent),
  };
}

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

/**
 * The mean and ±1 std of the members' smoothed curves, over the x range they all cover (up to
 * where the shortest run ends, so the mean never silently becomes one run's curve).
 */
function seedGroupBand(
  members: readonly Member[],
  unit: 'seed' | 'run',
  points: number,
  axis: XAxis,
): { x: number[]; mean: number[]; lo: number[]; hi: number[]; caption: string } | undefined {
  let start = -Infinity;
  let end = Infinity;
  let longest = -Infinity;
  for (const m of members) {
    start = Math.max(start, m.x[0]!);
    end = Math.min(end, m.x[m.x.length - 1]!);
    longest = Math.max(longest, m.x[m.x.length - 1]!);
  }
  if (end < start) return undefined;
  const grid = bandGrid(members[0]!.x, start, end, points);
  const band = seedBand(
    members.map((m) => resample(m.x, m.s, grid)),
    unit,
  );
  const upTo = axis === 'update' ? `update ${end}` : `${formatTick(end)} ${X_AXIS_PHRASES[axis]}`;
  const tail = end < longest ? `; drawn up to ${upTo}, where the shortest run ends` : '';
  return {
    x: grid,
    mean: band.mean,
    lo: band.mean.map((m, i) => m - band.std[i]!),
    hi: band.mean.map((m, i) => m + band.std[i]!),
    caption: band.caption + tail,
  };
}

/** A closed path: along the upper edge, back along the lower one (finite points only). */
function bandPath(
  xs: readonly number[],
  lo: readonly number[],
  hi: readonly number[],
  sx: (v: number) => number,
  sy: (v: number) => number,
): string {
  const keep: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    if (Number.isFinite(lo[i]!) && Number.isFinite(hi[i]!)) keep.push(i);
  }
  if (keep.length === 0) return '';
  const at = (i: number, y: number) => `${sx(xs[i]!).toFixed(1)} ${sy(y).toFixed(1)}`;
  const upper = keep.map((i, k) => `${k === 0 ? 'M' : 'L'}${at(i, hi[i]!)}`).join('');
  const lower = [...keep]
    .reverse()
    .map((i) => `L${at(i, lo[i]!)}`)
    .join('');
  return `${upper}${lower}Z`;
}

function chartSummary(
  metric: string,
  axis: XAxis,
  smoothing: Smoothing,
  drawn: readonly {
    members: readonly Member[];
    raw: readonly { y: readonly number[] }[];
    line: { y: readonly number[] };
    band?: { caption: string };
  }[],
  excluded: ChartModel['excluded'],
  silent: readonly string[],
): string {
  const head = `${metric} over ${X_AXIS_PHRASES[axis]} (${describeSmoothing(smoothing)})`;
  const parts = drawn.map((d) => {
    const names = d.members.map((m) => shortName(m.run.label));
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of d.raw) {
      for (const v of r.y) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    const line = d.line.y.filter(Number.isFinite);
    const trend = describeTrend(line[0]!, line[line.length - 1]!, lo, hi);
    const points = d.members.reduce((n, m) => n + m.x.length, 0);
    const who =
      names.length > 1
        ? `runs ${listOf(names.map((n) => n.replace(/^run /, '')))} (${d.band?.caption ?? 'grouped'})`
        : names[0]!;
    return `${who} ${trend}; raw values from ${formatTick(lo)} to ${formatTick(hi)}, ${points} points`;
  });
  const sentences = [
    parts.length > 0 ? `${head}: ${parts.join('. ')}.` : `${head}: nothing to draw.`,
  ];
  if (excluded.length > 0) {
    sentences.push(
      `Not on this axis: ${excluded.map((e) => `${shortName(e.label)} (${e.reason})`).join('; ')}.`,
    );
  }
  if (silent.length > 0) sentences.push(`${listOf(silent)} did not log ${metric}.`);
  return sentences.join(' ');
}

// ---------------------------------------------------------------------------------------------
// The final-metrics table

/** A setting's value as the table shows it ('—' when the run's algorithm has no such key). */
export function settingText(value: Settings[string] | undefined): string {
  return value === undefined ? '—' : String(value);
}

export interface FinalRow {
  id: string;
  label: string;
  color: string;
  dash: string;
  seed: number;
  /** Per metric (same order as the table's metrics): mean of the last k finite values. */
  finals: FinalValue[];
  /** Per differing setting: the value in force at the end, and its live changes if any. */
  settings: { text: string; changed?: string }[];
}

export interface FinalTableModel {
  metrics: string[];
  /** Settings whose value is not the same in every run, in the algorithms' declared order. */
  diffKeys: string[];
  rows: FinalRow[];
  /** k: "final" is the mean of the last k reported values. */
  window: number;
}

/**
 * One row per run: the final value of each metric, and the settings that differ between the runs
 * (configDiff over the config each run ended with — created-with config plus live changes — plus
 * any key a run changed live, since a run whose learning rate moved mid-way differs from one
 * left alone even when both end at the same value).
 */
export function finalTableModel(
  runs: readonly (RunView & { dash: string })[],
  metrics: readonly string[],
  catalog: CompareCatalog | undefined,
  k = DEFAULT_FINAL_WINDOW,
): FinalTableModel {
  const records = runs.map((run) => runRecord(run));
  const ended = records.map((r) => ({ algorithm: r.algorithm, config: configAt(r, Infinity) }));
  const changedKeys = new Set<string>();
  for (const r of records) {
    for (const e of r.events)
      if (e.kind === 'hyperparams') Object.keys(e.changes).forEach((key) => changedKeys.add(key));
  }
  const differing = configDiff(
    ended,
    catalog ?? { algorithms: [], tasks: [], sftSteps: EMPTY_SFT },
  );
  const diffKeys = [...differing, ...[...changedKeys].filter((key) => !differing.includes(key))];
  const rows = runs.map((run, i): FinalRow => ({
    id: run.id,
    label: run.label,
    color: run.color,
    dash: run.dash,
    seed: run.spec.seed,
    finals: metrics.map((m) => finalValue(run.series[m]?.y ?? [], k)),
    settings: diffKeys.map((key) => {
      const text = settingText(ended[i]!.config[key]);
      const steps = records[i]!.events.flatMap((e) =>
        e.kind === 'hyperparams' && Object.hasOwn(e.changes, key) ? [e.step] : [],
      );
      if (steps.length === 0) return { text };
      const was = settingText(records[i]!.config[key]);
      const at = steps.length === 1 ? `update ${steps[0]}` : `updates ${steps.join(', ')}`;
      return { text, changed: `changed live at ${at} (was ${was})` };
    }),
  }));
  return { metrics: [...metrics], diffKeys, rows, window: k };
}

const EMPTY_SFT = { default: 0, min: 0, max: 0, doc: '' };

/**
 * Row order for a table column: ascending or descending by `keys` (numbers numerically, text with
 * numbers in it compared as numbers, so "#10" sorts after "#9"); rows without a value (NaN,
 * undefined) always last; equal keys keep their order.
 */
export function sortedRowOrder(
  keys: readonly (number | string | undefined)[],
  descending: boolean,
): number[] {
  const missing = (v: number | string | undefined) =>
    v === undefined || (typeof v === 'number' && !Number.isFinite(v));
  const sign = descending ? -1 : 1;
  return keys
    .map((key, index) => ({ key, index }))
    .sort((a, b) => {
      const ma = missing(a.key);
      const mb = missing(b.key);
      if (ma || mb) return ma === mb ? a.index - b.index : ma ? 1 : -1;
      const c =
        typeof a.key === 'number' && typeof b.key === 'number'
          ? a.key - b.key
          : String(a.key).localeCompare(String(b.key), 'en', { numeric: true });
      return c === 0 ? a.index - b.index : sign * c;
    })
    .map((r) => r.index);
}
