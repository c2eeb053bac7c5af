/**
 * The arithmetic of a lesson's metric check (`check="values/converged>=1"`, parsed in
 * src/lessons/checks.ts): the mean of a metric's last WINDOW values, or its gain over the first
 * BASELINE values, compared with a number. It lives in the worker layer because the worker judges
 * a lesson run's goal after every update (run-host.ts), so that a run stops at the update where
 * its check passes rather than a batch of updates later; the lessons and the page use it too.
 */

/** Values averaged by a metric check (the last 10, as the brief of the lesson widgets asks). */
export const WINDOW = 10;
/**
 * The first values a gain check takes as the run's start: 5 updates of 64 answers measure a
 * success rate near 0.25 to about ±0.03 (one standard error).
 */
export const BASELINE = 5;

export type CheckOp = '>=' | '<=' | '>' | '<';

export interface MetricCheck {
  kind: 'metric';
  metric: string;
  op: CheckOp;
  value: number;
  /** Values needed before the check is judged (WINDOW at least). */
  after: number;
  /** Compare the gain over the run's first BASELINE values instead of the level. */
  gain: boolean;
  text: string;
}

export function compare(x: number, op: CheckOp, y: number): boolean {
  switch (op) {
    case '>=':
      return x >= y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    case '<':
      return x < y;
  }
}

/** Mean of the last WINDOW values, or undefined while there are fewer. */
export function windowMean(values: readonly number[], window = WINDOW): number | undefined {
  if (values.length < window) return undefined;
  let sum = 0;
  for (let i = values.length - window; i < values.length; i++) sum += values[i]!;
  return sum / window;
}

/** Mean of the first BASELINE values: the run's start, as a gain check measures it. */
export function baselineMean(values: readonly number[]): number | undefined {
  if (values.length < BASELINE) return undefined;
  let sum = 0;
  for (let i = 0; i < BASELINE; i++) sum += values[i]!;
  return sum / BASELINE;
}

/**
 * What a metric check compares now: the window's mean, or its gain over the start (undefined
 * while there are too few values to judge).
 */
export function checkedValue(check: MetricCheck, values: readonly number[]): number | undefined {
  if (values.length < check.after) return undefined;
  const mean = windowMean(values);
  if (mean === undefined || !check.gain) return mean;
  const start = baselineMean(values);
  return start === undefined ? undefined : mean - start;
}

/** A metric check on a run's series for that metric. */
export function metricCheckPassed(check: MetricCheck, values: readonly number[]): boolean {
  const value = checkedValue(check, values);
  return value !== undefined && compare(value, check.op, check.value);
}
