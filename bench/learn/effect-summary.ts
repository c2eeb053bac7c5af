/**
 * One lessons-bench row (lesson-effects.ts EffectRow) summarised over its seeds: how many passed
 * and when, what it cost, and how close each control came. Both the bench's own table
 * (lesson-effects.ts renderEffects) and the README's claims tables (claims-table.ts) print from
 * this, so a summary is defined once.
 */
import { parseCheck } from '../../src/lessons/checks';
import type { EffectRow, SeedRun } from './lesson-effects';

export interface ControlSummary {
  control: string;
  passed: number;
  runs: number;
  /** The check's value at the end of each control run that had one. */
  values: number[];
  /** The control closest to passing: the largest value for a `>=`/`>` check, the smallest else. */
  closest: number | null;
}

export interface EffectSummary {
  passed: number;
  runs: number;
  /** The updates at which the passing seeds passed. */
  passedAt: number[];
  /** Median over the passing seeds; null when none passed. */
  medianSeconds: number | null;
  /** Median over the passing seeds; null when none passed or a run did not record it. */
  medianCpuSeconds: number | null;
  /** The check's value at the pass, for each passing seed that had one. */
  valuesAtCheck: number[];
  /** Which end of the controls' values is the one nearest the check's threshold. */
  closestIs: 'max' | 'min';
  /** The first control, then the second (`alsoControl`) where the row has one. */
  controls: ControlSummary[];
  /** Every seed passed and no run of any control did. */
  holds: boolean;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Mean and sample standard deviation; null for no values. */
export function meanSd(xs: readonly number[]): { mean: number; sd: number } | null {
  if (xs.length === 0) return null;
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, xs.length - 1));
  return { mean, sd };
}

export const fmt = (x: number | null | undefined) =>
  x === null || x === undefined ? '—' : x.toFixed(2);

export function fmtMeanSd(xs: readonly number[]): string {
  const m = meanSd(xs);
  return m ? `${m.mean.toFixed(2)} ± ${m.sd.toFixed(2)}` : '—';
}

const valuesOf = (runs: readonly SeedRun[]) =>
  runs.flatMap((x) => (x.value === null || x.value === undefined ? [] : [x.value]));

export function summariseEffect(row: EffectRow): EffectSummary {
  const check = parseCheck(row.check);
  if (typeof check === 'string' || check.kind !== 'metric') {
    throw new Error(`${row.preset}: '${row.check}' is not a metric check`);
  }
  const closestIs = check.op === '>=' || check.op === '>' ? 'max' : 'min';
  const passed = row.runs.filter((x) => x.passedAt !== null);
  // Result files written before the bench recorded CPU time have no cpuSeconds.
  const cpu = passed.map((x) => x.cpuSeconds as number | undefined);
  const groups = [
    { control: row.control, controls: row.controls },
    ...(row.also ? [row.also] : []),
  ];
  const controls = groups.map((g): ControlSummary => {
    const values = valuesOf(g.controls);
    return {
      control: g.control,
      passed: g.controls.filter((x) => x.passedAt !== null).length,
      runs: g.controls.length,
      values,
      closest: values.length
        ? closestIs === 'max'
          ? Math.max(...values)
          : Math.min(...values)
        : null,
    };
  });
  return {
    passed: passed.length,
    runs: row.runs.length,
    passedAt: passed.map((x) => x.passedAt!),
    medianSeconds: passed.length ? median(passed.map((x) => x.seconds)) : null,
    medianCpuSeconds:
      passed.length && cpu.every((s) => typeof s === 'number') ? median(cpu as number[]) : null,
    valuesAtCheck: valuesOf(passed),
    closestIs,
    controls,
    holds: passed.length === row.runs.length && controls.every((c) => c.passed === 0),
  };
}

/** "0.23 / 0.75 (G 8)": the shipped start's sampled pass@1 and pass@G, or "—" for no such start. */
export function fmtStart(start: EffectRow['start']): string {
  return start ? `${fmt(start.passAt1)} / ${fmt(start.passAtG)} (G ${start.groupSize})` : '—';
}

/** "18 (17–19)": the median update of the passing seeds and their range. */
export function fmtPassedAt(s: EffectSummary, budget: number): string {
  return s.passedAt.length
    ? `${median(s.passedAt)} (${Math.min(...s.passedAt)}–${Math.max(...s.passedAt)})`
    : `not in ${budget}`;
}

/** "-0.00 ± 0.03 (max 0.04)": a control's values and the one nearest the threshold. */
export function fmtControlValues(c: ControlSummary, closestIs: 'max' | 'min'): string {
  return `${fmtMeanSd(c.values)} (${closestIs} ${fmt(c.closest)})`;
}
