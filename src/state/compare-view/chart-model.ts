/**
 * One chart of the compare view as a pure function: each run's points on the chosen x-axis,
 * causal smoothing, thinning to the chart's pixel width (min and max per pixel column, so spikes
 * survive), seed-group bands, live-change markers, the y-scale (y-scale.ts: 0–1 for a rate, log
 * where values span decades) and a text summary, as the PlotSpec that the chart component
 * (src/ui/charts/Plot.svelte) draws. Tested without a DOM.
 *
 * Cost: smoothing is O(points) per series (a causal smoother has to see every point); everything
 * after it — extents, band, paths, summary — works on the thinned points, at most ≈ 2 per pixel
 * column per series, so a 100k-point series costs no more to draw than a 1k-point one.
 */
import { seedBand } from '../../compare/seed-groups';
import type { Smoothing } from '../../compare/smoothing';
import type { XAxis } from '../../compare/x-axis';
import { own } from '../../util/own';
import { formatTick, robustExtent } from '../chart';
import type { PlotBand, PlotLine, PlotMarker } from '../charts/plot-spec';
import { extentOf, yScale } from '../charts/y-scale';
import { changeText } from '../live-change';
import { X_AXIS_LABELS } from '../../compare/x-axis';
import type { ChartEntry, ChartInput, ChartLine, ChartModel, ChartRun } from './chart-types';
import {
  describeSmoothing,
  describeTrend,
  groupLabel,
  listOf,
  shortName,
  X_AXIS_PHRASES,
} from './describe';
import { preparedSeries, type PreparedSeries } from './prepared-series';
import { bandGrid, resample } from './resample';
import { thinnedSeries, thinningEnd } from './thinning';

/** Faint raw lines under the smoothed ones. */
const RAW_ALPHA = 0.25;

/** An SVG dash array ("6 3") as a canvas dash pattern. */
const dashOf = (dash: string) =>
  dash
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);

interface Member {
  run: ChartRun;
  x: readonly number[];
  y: readonly number[];
  s: readonly number[];
  prepared: PreparedSeries;
}

/** Everything a chart draws, in its own pixel coordinates. */
export function chartModel(input: ChartInput): ChartModel {
  const { metric, smoothing } = input;
  const buckets = Math.max(1, Math.round(input.width));
  const excluded: ChartModel['excluded'] = [];
  const notes: string[] = [];
  const silent: string[] = [];

  // 1. Each run's points on the axis, smoothed over all of them (causal: O(points)).
  const entries: { entry: ChartEntry; members: Member[] }[] = [];
  for (const entry of input.entries) {
    const members: Member[] = [];
    for (const run of entry.runs) {
      const series = own(run.series, metric);
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
  let extent = extentOf(ys);
  if (input.ignoreOutliers) {
    const [lo, hi] = robustExtent(ys);
    extent = { lo, hi, minPositive: lo > 0 ? lo : extent.minPositive };
  }
  const y = yScale(metric, extent);

  const lines: ChartLine[] = [];
  const plotLines: PlotLine[] = [];
  const bands: PlotBand[] = [];
  for (const d of drawn) {
    const runs = d.members.map((m) => m.run);
    const first = runs[0]!;
    const points = d.members.reduce((n, m) => n + m.x.length, 0);
    const label = runs.length > 1 ? groupLabel(runs) : first.label;
    const line: ChartLine = {
      id: first.id,
      runIds: runs.map((r) => r.id),
      label,
      color: first.color,
      points,
    };
    if (d.band) line.caption = d.band.caption;
    lines.push(line);
    const style = { id: first.id, color: first.color, dash: dashOf(first.dash), points };
    if (smoothing.kind !== 'none' && !d.band) {
      for (const r of d.raw) {
        plotLines.push({
          ...style,
          label,
          width: 1,
          alpha: RAW_ALPHA,
          x: r.x,
          y: r.y,
          main: false,
        });
      }
    }
    plotLines.push({ ...style, label, width: 2, alpha: 1, x: d.line.x, y: d.line.y, main: true });
    if (d.band) bands.push({ x: d.band.x, lo: d.band.lo, hi: d.band.hi, color: first.color });
  }

  // 5. Live changes, at the x of the update they first applied to.
  const markers: PlotMarker[] = [];
  for (const d of drawn) {
    const run = d.members[0]!.run;
    for (const event of run.events) {
      if (event.kind !== 'hyperparams' || !run.axis.ok) continue;
      const at = run.axis.at(event.step);
      if (!Number.isFinite(at) || at < x0 || at > x1) continue;
      markers.push({
        x: at,
        runId: run.id,
        color: run.color,
        title: `${shortName(run.label)}: ${changeText(event.changes)} at update ${event.step}`,
      });
    }
  }

  return {
    metric,
    spec: {
      xTitle: X_AXIS_LABELS[input.axis],
      yTitle: metric,
      x: { min: x0, max: x1 },
      y,
      lines: plotLines,
      bands,
      markers,
    },
    lines,
    excluded,
    notes,
    summary: chartSummary(metric, input.axis, smoothing, drawn, excluded, silent),
  };
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
