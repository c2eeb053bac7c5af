/**
 * The table under a lesson's seeds block: for each preset, what its seeds took to pass the
 * preset's check — updates, generated tokens, training seconds — and where the check stood at the
 * end of the budget, each as mean ± std over the seeds; then the difference between two presets
 * with its standard error, √(sd₁²/n₁ + sd₂²/n₂) (Welch's, for unequal spreads).
 *
 * Pure functions of the runs as RunRecords (src/compare/run-record.ts). The spread over seeds is
 * the compare view's own (seedBand: sample std, n − 1, in two passes), and tokens and seconds are
 * its x-axes (xValues: Σ perf/generated_tokens and Σ timing_s/step, training time only — pauses
 * and the page's time between updates are not in it).
 */
import { seedBand } from '../compare/seed-groups';
import { updateCount, type RunRecord } from '../compare/run-record';
import { xValues } from '../compare/x-axis';
import { checkedValue, metricCheckPassed, type MetricCheck } from './checks';

/** Mean ± sample std over n seeds (std 0 when n = 1). */
export interface SeedStat {
  n: number;
  mean: number;
  std: number;
}

/** One run against its check. */
export interface RunOutcome {
  /** Updates the run has reported. */
  updates: number;
  /** The first update at which the check held on the series up to it; null: not (yet). */
  passedAt: number | null;
  /** Σ perf/generated_tokens (or its stand-in, see x-axis.ts) through passedAt. */
  tokensToPass: number | null;
  /** Σ timing_s/step through passedAt: training seconds, not clock time. */
  secondsToPass: number | null;
  /** The checked value (a gain, for gain checks) on the first `budget` updates; null until then. */
  atBudget: number | null;
}

export interface PresetSummary {
  runs: RunOutcome[];
  /** Runs that passed / may still pass (below the budget) / did not pass within it. */
  passed: number;
  pending: number;
  failed: number;
  /** Over the runs that passed; undefined while none has. */
  updates?: SeedStat;
  tokens?: SeedStat;
  seconds?: SeedStat;
  /** Over the runs that reached the budget; undefined while none has. */
  atBudget?: SeedStat;
}

/** A difference of two means and its standard error. */
export interface Difference {
  diff: number;
  se: number;
}

/** Mean and sample std of the finite values (the compare view's seedBand on one point each). */
export function seedStat(values: readonly (number | null)[]): SeedStat | undefined {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (finite.length === 0) return undefined;
  const band = seedBand(finite.map((v) => [v]));
  return { n: finite.length, mean: band.mean[0]!, std: band.std[0]! };
}

/** How one run stands against `check` within `budget` updates. */
export function runOutcome(run: RunRecord, check: MetricCheck, budget: number): RunOutcome {
  const values = run.metrics[check.metric] ?? [];
  const updates = updateCount(run);
  const upTo = Math.min(values.length, budget);
  let passedAt: number | null = null;
  for (let n = check.after; n <= upTo; n++) {
    if (metricCheckPassed(check, values.slice(0, n))) {
      passedAt = n;
      break;
    }
  }
  const at = (axis: 'tokens' | 'wall_time') => {
    if (passedAt === null) return null;
    const x = xValues(run, axis);
    const v = x.ok ? x.values[passedAt - 1] : undefined;
    return v !== undefined && Number.isFinite(v) ? v : null;
  };
  const atBudget = values.length >= budget ? checkedValue(check, values.slice(0, budget)) : null;
  return {
    updates,
    passedAt,
    tokensToPass: at('tokens'),
    secondsToPass: at('wall_time'),
    atBudget: atBudget ?? null,
  };
}

/** A preset's seeds against its check, summarized. */
export function presetSummary(
  runs: readonly RunRecord[],
  check: MetricCheck,
  budget: number,
): PresetSummary {
  const outcomes = runs.map((run) => runOutcome(run, check, budget));
  const passed = outcomes.filter((o) => o.passedAt !== null);
  const pending = outcomes.filter((o) => o.passedAt === null && o.updates < budget).length;
  const summary: PresetSummary = {
    runs: outcomes,
    passed: passed.length,
    pending,
    failed: outcomes.length - passed.length - pending,
  };
  const set = <K extends 'updates' | 'tokens' | 'seconds' | 'atBudget'>(
    key: K,
    stat: SeedStat | undefined,
  ) => {
    if (stat) summary[key] = stat;
  };
  set('updates', seedStat(passed.map((o) => o.passedAt)));
  set('tokens', seedStat(passed.map((o) => o.tokensToPass)));
  set('seconds', seedStat(passed.map((o) => o.secondsToPass)));
  set('atBudget', seedStat(outcomes.map((o) => o.atBudget)));
  return summary;
}

/**
 * a − b with its standard error √(sd_a²/n_a + sd_b²/n_b); undefined unless both have at least 2
 * values (one value has no spread to carry).
 */
export function difference(
  a: SeedStat | undefined,
  b: SeedStat | undefined,
): Difference | undefined {
  if (!a || !b || a.n < 2 || b.n < 2) return undefined;
  return { diff: a.mean - b.mean, se: Math.sqrt((a.std * a.std) / a.n + (b.std * b.std) / b.n) };
}

/** A number for the table: `digits` significant, ten thousands and up in 'k' ("12.3k", "0.312"). */
export function formatValue(v: number, digits = 3): string {
  const a = Math.abs(v);
  const text =
    a >= 10_000
      ? `${Number((v / 1000).toPrecision(digits))}k`
      : String(Number(v.toPrecision(digits)));
  return text.replace('-', '−');
}

/**
 * "14.3 ± 2.1": the mean to 3 significant digits, its spread to 2 (three seeds do not know a
 * spread better); a leading sign when `signed` ("+0.412 ± 0.05").
 */
export function formatStat(mean: number, spread: number, signed = false): string {
  const sign = signed && mean > 0 ? '+' : '';
  return `${sign}${formatValue(mean)} ± ${formatValue(spread, 2)}`;
}

/**
 * One cell of "what it took to pass": the mean ± std while every seed passed, how many have while
 * some may still, and how many did not once none can.
 */
export function passCell(summary: PresetSummary, stat: SeedStat | undefined): string {
  const n = summary.runs.length;
  if (summary.passed === n && stat) return formatStat(stat.mean, stat.std);
  if (summary.pending > 0)
    return summary.passed ? `not yet (${summary.passed} of ${n})` : 'not yet';
  const over = stat ? `${formatStat(stat.mean, stat.std)} over ${stat.n}; ` : '';
  return `${over}${summary.failed} of ${n} did not pass`;
}

/** The difference cell: "−3.2 ± 1.9", or why there is none yet. */
export function differenceCell(
  a: PresetSummary,
  b: PresetSummary,
  pick: (s: PresetSummary) => SeedStat | undefined,
  everyRun = true,
): string {
  const complete = (s: PresetSummary) =>
    everyRun ? s.passed === s.runs.length : s.runs.every((r) => r.atBudget !== null);
  if (!complete(a) || !complete(b)) return a.pending || b.pending ? 'not yet' : '—';
  const d = difference(pick(a), pick(b));
  return d ? formatStat(d.diff, d.se, true) : '—';
}

/** What the runs trained on: "CPU", "WebGPU", "CPU and WebGPU" (then seconds do not compare). */
export function backendCaption(kinds: readonly (string | undefined)[]): string {
  const names = [...new Set(kinds.filter((k) => k !== undefined))].sort();
  if (names.length === 0) return 'backend not reported yet';
  return names.map((k) => (k === 'webgpu' ? 'WebGPU' : k.toUpperCase())).join(' and ');
}
