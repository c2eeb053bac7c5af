/**
 * The compare view's table: one row per run, the final value of each chosen metric, and which
 * settings differ between the runs (to highlight those columns). "Final" is the mean of the last k
 * finite values rather than the very last one, so one noisy update does not decide the ranking
 * (TensorBoard and W&B summaries show the last value; papers usually average the tail).
 */
import { own } from '../util/own';
import { findAlgorithm, type CompareCatalog, type RunRecord, type Settings } from './run-record';

export const DEFAULT_FINAL_WINDOW = 10;

export interface FinalValue {
  /** Mean of the last `count` finite values (NaN when the run never reported the metric). */
  value: number;
  /** How many values went into it: min(k, finite values reported). */
  count: number;
}

/** Mean of the last k finite values of `values` (k integer ≥ 1). */
export function finalValue(values: readonly number[], k = DEFAULT_FINAL_WINDOW): FinalValue {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be an integer ≥ 1, got ${k}`);
  let sum = 0;
  let count = 0;
  for (let i = values.length - 1; i >= 0 && count < k; i--) {
    const v = values[i]!;
    if (Number.isFinite(v)) {
      sum += v;
      count += 1;
    }
  }
  return { value: count > 0 ? sum / count : NaN, count };
}

/** Per run, per metric: the final value (runs in input order, metrics keyed by name). */
export function finalTable(
  runs: readonly RunRecord[],
  metrics: readonly string[],
  k = DEFAULT_FINAL_WINDOW,
): Record<string, FinalValue>[] {
  return runs.map((run) =>
    Object.fromEntries(metrics.map((m) => [m, finalValue(own(run.metrics, m) ?? [], k)])),
  );
}

/**
 * The config keys whose values are not the same in every run (a key some run lacks — runs of
 * different algorithms — counts as differing). Ordered as the algorithms' specs declare them: the
 * first run's algorithm first, then keys only later algorithms have; keys no spec knows last, in
 * the order met.
 */
export function configDiff(
  runs: readonly Pick<RunRecord, 'algorithm' | 'config'>[],
  catalog: CompareCatalog,
): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const add = (key: string) => {
    if (!seen.has(key)) {
      seen.add(key);
      order.push(key);
    }
  };
  for (const run of runs) {
    const algo = findAlgorithm(catalog, run.algorithm);
    if (algo) Object.keys(algo.spec).forEach(add);
  }
  for (const run of runs) Object.keys(run.config).forEach(add);
  return order.filter((key) => !allEqual(runs.map((run) => valueOf(run.config, key))));
}

function valueOf(config: Settings, key: string): Settings[string] | undefined {
  return Object.hasOwn(config, key) ? config[key] : undefined;
}

function allEqual(values: readonly unknown[]): boolean {
  return values.every((v) => v === values[0]);
}
