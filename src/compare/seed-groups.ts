/**
 * Seed groups: runs that differ only in their seed are repeats of one experiment, and the compare
 * view draws them as one mean curve with a ±1 std band. Runs belong together when they have the
 * same algorithm, task and config (every setting equal) and the same live changes at the same
 * updates ('hyperparams' events) — a run whose learning rate was changed at update 40 is a
 * different experiment from one left alone.
 *
 * Per update the band uses only the runs that reported the metric there (a shorter run stops
 * counting where it ends): mean, and the sample standard deviation (n − 1) in two passes, never
 * E[x²] − E[x]²; with one run the std is 0. The caption says what the band is, e.g.
 * "mean ± 1 std over 3 seeds".
 */
import { own } from '../util/own';
import type { RunRecord } from './run-record';

export interface SeedGroup<R extends RunRecord = RunRecord> {
  /** Identical for runs of one group, different otherwise (canonical JSON of what they share). */
  key: string;
  /** The group's runs, in input order. */
  runs: R[];
  /** Their seeds, in the same order. */
  seeds: number[];
}

export interface SeedBand {
  /** Per update: mean over the runs that have a finite value there (NaN where none has). */
  mean: number[];
  /** Per update: sample std (n − 1) over those runs; 0 where n = 1, NaN where n = 0. */
  std: number[];
  /** Per update: how many runs had a finite value. */
  count: number[];
  /** What the band shows, e.g. "mean ± 1 std over 3 seeds", or "1 seed". */
  caption: string;
}

/** Groups runs that differ only in their seed; groups in order of their first run. */
export function groupBySeed<R extends RunRecord>(runs: readonly R[]): SeedGroup<R>[] {
  const groups = new Map<string, SeedGroup<R>>();
  for (const run of runs) {
    const key = experimentKey(run);
    let group = groups.get(key);
    if (!group) {
      group = { key, runs: [], seeds: [] };
      groups.set(key, group);
    }
    group.runs.push(run);
    group.seeds.push(run.seed);
  }
  return [...groups.values()];
}

/** The band of one metric over a group's runs. */
export function groupBand(group: SeedGroup, metric: string): SeedBand {
  const series = group.runs.map((run) => own(run.metrics, metric) ?? []);
  const distinctSeeds = new Set(group.seeds).size === group.seeds.length;
  return seedBand(series, distinctSeeds ? 'seed' : 'run');
}

/**
 * Mean and sample std per index over several series of one metric (series may differ in length;
 * non-finite values are left out). `unit` names what each series is in the caption.
 */
export function seedBand(series: readonly (readonly number[])[], unit = 'seed'): SeedBand {
  let length = 0;
  for (const s of series) length = Math.max(length, s.length);
  const mean = new Array<number>(length);
  const std = new Array<number>(length);
  const count = new Array<number>(length);
  let fewest = Infinity;
  let most = 0;
  for (let i = 0; i < length; i++) {
    // Pass 1: the mean of the finite values at i.
    let n = 0;
    let sum = 0;
    for (const s of series) {
      const v = s[i];
      if (v !== undefined && Number.isFinite(v)) {
        n += 1;
        sum += v;
      }
    }
    count[i] = n;
    if (n === 0) {
      mean[i] = NaN;
      std[i] = NaN;
      continue;
    }
    const m = sum / n;
    // Pass 2: squared deviations from that mean.
    let squares = 0;
    for (const s of series) {
      const v = s[i];
      if (v !== undefined && Number.isFinite(v)) squares += (v - m) * (v - m);
    }
    mean[i] = m;
    std[i] = n > 1 ? Math.sqrt(squares / (n - 1)) : 0;
    fewest = Math.min(fewest, n);
    most = Math.max(most, n);
  }
  return { mean, std, count, caption: bandCaption(fewest, most, series.length, unit) };
}

/**
 * "mean ± 1 std over 3 seeds"; "… over 2–3 seeds" when some updates have fewer runs; "1 seed"
 * when there is nothing to spread over.
 */
export function bandCaption(fewest: number, most: number, runs: number, unit = 'seed'): string {
  // No finite value anywhere: say how many runs there are, with no band.
  if (most === 0) return `${runs} ${plural(unit, runs)}, no values`;
  if (most === 1) return `1 ${unit}`;
  const over = fewest === most ? `${most}` : `${fewest}–${most}`;
  return `mean ± 1 std over ${over} ${plural(unit, most)}`;
}

function plural(unit: string, n: number): string {
  return n === 1 ? unit : `${unit}s`;
}

/** Canonical JSON of algorithm, task, config (sorted keys) and live changes. */
function experimentKey(run: RunRecord): string {
  const sorted = (o: Record<string, unknown>) =>
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]);
  const changes = run.events
    .filter((e) => e.kind === 'hyperparams')
    .map((e) => [e.step, sorted(e.changes)]);
  return JSON.stringify([run.algorithm, run.task, sorted(run.config), changes]);
}
