/**
 * What a lesson widget says of its metric check (checks.ts) in words: where the run stands while
 * the check is not met, the standing at the update where it passed (kept on screen after the
 * pass), and about how long until it passes at the run's own trend. Pure functions of the
 * metric's values, so that the widget only renders them and the CPU tests pin every line.
 *
 * Numbers are shown with as many decimals as it takes to land on the same side of the target as
 * the exact value: a gain of 0.2996 against `gain >= 0.3` reads "+0.2996", never "+0.30 — not
 * yet", which reads as met.
 */
import { BASELINE, WINDOW, baselineMean, compare, windowMean, type CheckOp } from './checks';
import type { MetricCheck } from './checks';

/** The fewest and most decimals a number is shown with. */
const LEAST_DIGITS = 2;
const MOST_DIGITS = 6;

const OP_TEXT: Record<CheckOp, string> = { '>=': '≥', '<=': '≤', '>': '>', '<': '<' };

/** Values the trend is fitted on (the latest ones: a run's rise is rarely straight for long). */
export const TREND_SPAN = 20;
/** Fewer values than this give no trend worth stating. */
export const TREND_LEAST = 6;
/** Standard errors a slope must clear to count as a trend. */
const TREND_T = 2;
/** Updates beyond which an estimate says nothing useful ("at this trend, never"). */
const FAR = 10_000;

/** Updates whose seconds the time estimate averages (a run slows as its answers grow). */
const RECENT_TIMINGS = 5;

/** `x` with `digits` decimals; values of 100 and more with none unless more are needed. */
function fixed(x: number, digits: number): string {
  return Math.abs(x) >= 100 && digits === LEAST_DIGITS ? x.toFixed(0) : x.toFixed(digits);
}

/** The target as written, with at least LEAST_DIGITS decimals: 0.3 → "0.30", 0.125 → "0.125". */
export function targetText(target: number): string {
  for (let d = LEAST_DIGITS; d < MOST_DIGITS; d++) {
    if (Number(target.toFixed(d)) === target) return fixed(target, d);
  }
  return fixed(target, MOST_DIGITS);
}

/**
 * The decimals that show `value` on the same side of `target` as it truly is: the rounded number
 * the reader sees compares with the target as the exact one does. LEAST_DIGITS where that
 * already holds; at most MOST_DIGITS.
 */
export function faithfulDigits(value: number, op: CheckOp, target: number): number {
  const truth = compare(value, op, target);
  for (let d = LEAST_DIGITS; d < MOST_DIGITS; d++) {
    if (compare(Number(fixed(value, d)), op, target) === truth) return d;
  }
  return MOST_DIGITS;
}

const signed = (text: string) => (text.startsWith('-') ? text : `+${text}`);

/** The checked value against the target: "gain +0.2996, target ≥ +0.30". */
function againstText(check: MetricCheck, value: number): string {
  const digits = faithfulDigits(value, check.op, check.value);
  const shown = fixed(value, digits);
  const target = targetText(check.value);
  return check.gain
    ? `gain ${signed(shown)}, target ${OP_TEXT[check.op]} ${signed(target)}`
    : `target ${OP_TEXT[check.op]} ${target}`;
}

/** "start 0.25, last 10 0.45 — gain +0.20, target ≥ +0.30" for `values` that can be judged. */
function judgedText(check: MetricCheck, values: readonly number[]): string {
  const mean = windowMean(values)!;
  if (!check.gain) {
    const digits = faithfulDigits(mean, check.op, check.value);
    return `last ${WINDOW} ${fixed(mean, digits)}, ${againstText(check, mean)}`;
  }
  const start = baselineMean(values)!;
  const gain = mean - start;
  const digits = faithfulDigits(gain, check.op, check.value);
  return `start ${fixed(start, digits)}, last ${WINDOW} ${fixed(mean, digits)} — ${againstText(check, gain)}`;
}

/**
 * One line for a widget while its check is not met: the standing against the target, e.g.
 * "start 0.27, last 10 0.49 — gain +0.22, target ≥ +0.30"; before the check has its updates, the
 * latest value and the target, so the wait for the first updates already says what the run aims at.
 */
export function standingText(check: MetricCheck, values: readonly number[]): string {
  if (values.length < check.after) {
    const latest = values.length ? `latest ${fixed(values.at(-1)!, LEAST_DIGITS)} — ` : '';
    const target = check.gain
      ? `gain ${OP_TEXT[check.op]} ${signed(targetText(check.value))}`
      : `${OP_TEXT[check.op]} ${targetText(check.value)}`;
    return `${latest}${values.length} of the ${check.after} updates the check needs, target ${target}`;
  }
  return judgedText(check, values);
}

/**
 * The standing at the update where the check passed, kept after the pass: "passed at update 17:
 * start 0.40, last 10 0.72, gain +0.32". `updates` numbers the values (a series' x); the values
 * up to `passedAt` are judged. A run that trained on after its pass adds where it is now.
 */
export function passedText(
  check: MetricCheck,
  updates: readonly number[],
  values: readonly number[],
  passedAt: number,
): string {
  let n = updates.findIndex((u) => u > passedAt);
  if (n === -1) n = values.length;
  const at = values.slice(0, n);
  const head = `passed at update ${passedAt}`;
  if (at.length < WINDOW || (check.gain && at.length < BASELINE)) return head;
  const mean = windowMean(at)!;
  let text: string;
  if (check.gain) {
    const start = baselineMean(at)!;
    text = `${head}: start ${fixed(start, LEAST_DIGITS)}, last ${WINDOW} ${fixed(mean, LEAST_DIGITS)}, gain ${signed(fixed(mean - start, faithfulDigits(mean - start, check.op, check.value)))}`;
  } else {
    text = `${head}: last ${WINDOW} ${fixed(mean, faithfulDigits(mean, check.op, check.value))}`;
  }
  if (values.length > n && values.length >= WINDOW) {
    const now = windowMean(values)!;
    text += check.gain
      ? ` · now last ${WINDOW} ${fixed(now, LEAST_DIGITS)}, gain ${signed(fixed(now - baselineMean(values)!, LEAST_DIGITS))}`
      : ` · now last ${WINDOW} ${fixed(now, LEAST_DIGITS)}`;
  }
  return text;
}

/**
 * A least-squares line through `ys` at x = 0, 1, …: its value at x = 0, its slope, and the
 * slope's standard error (from the residuals), so that noise is not read as a trend.
 */
function fitLine(ys: readonly number[]): { at0: number; slope: number; slopeError: number } {
  const n = ys.length;
  const meanX = (n - 1) / 2;
  let meanY = 0;
  for (const y of ys) meanY += y / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (i - meanX) * (ys[i]! - meanY);
    sxx += (i - meanX) ** 2;
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  const at0 = meanY - slope * meanX;
  let residuals = 0;
  for (let i = 0; i < n; i++) residuals += (ys[i]! - at0 - slope * i) ** 2;
  const slopeError = n > 2 && sxx > 0 ? Math.sqrt(residuals / (n - 2) / sxx) : Infinity;
  return { at0, slope, slopeError };
}

/**
 * Updates until the check passes if the metric keeps its trend: a line fitted to its latest
 * TREND_SPAN values, along which the window's mean (which lags the line by (WINDOW − 1) / 2
 * updates) reaches the target; never fewer than the updates the check still needs. Undefined
 * with too few values, or when the trend does not lead to the target (flat or within noise of
 * flat, the wrong way, or further than FAR updates).
 */
export function updatesToCheck(check: MetricCheck, values: readonly number[]): number | undefined {
  const n = values.length;
  if (n < TREND_LEAST || (check.gain && n < BASELINE)) return undefined;
  const recent = values.slice(-TREND_SPAN);
  const { at0, slope, slopeError } = fitLine(recent);
  const dir = check.op === '>=' || check.op === '>' ? 1 : -1;
  // The fitted line's value at the last update, and what the window's mean must reach there.
  const last = at0 + slope * (recent.length - 1);
  const target = check.gain ? baselineMean(values)! + check.value : check.value;
  const lag = (slope * (WINDOW - 1)) / 2;
  const short = (target - (last - lag)) * dir;
  const still = Math.max(check.after - n, 0);
  if (short <= 0) return Math.max(still, 1);
  // A slope within two standard errors of flat is noise, not a trend toward the target.
  if (slope * dir <= TREND_T * slopeError) return undefined;
  const k = Math.ceil(short / (slope * dir));
  return k > FAR ? undefined : Math.max(k, still, 1);
}

/** "42 s", "3 min". */
export function durationText(seconds: number): string {
  return seconds < 90 ? `${Math.max(1, Math.round(seconds))} s` : `${Math.round(seconds / 60)} min`;
}

/** Mean seconds of the latest updates, undefined before two were measured (one is the warm-up). */
export function secondsEach(secondsPerUpdate: readonly number[]): number | undefined {
  if (secondsPerUpdate.length < 2) return undefined;
  const recent = secondsPerUpdate.slice(-RECENT_TIMINGS);
  return recent.reduce((sum, s) => sum + s, 0) / recent.length;
}

/**
 * About how long to the check at the run's trend, e.g. "check in about 30 s at this trend (12
 * updates at 2.5 s each)"; past the budget, it says so. Undefined before there is a trend to go
 * by (the standing line covers that wait).
 */
export function checkEtaText(
  check: MetricCheck,
  values: readonly number[],
  secondsPerUpdate: readonly number[],
  budgetLeft?: number,
): string | undefined {
  if (values.length < TREND_LEAST) return undefined;
  const k = updatesToCheck(check, values);
  if (k === undefined) return 'no rise toward the target yet: no time to the check to estimate';
  const updates = k === 1 ? '1 update' : `${k} updates`;
  if (budgetLeft !== undefined && k > budgetLeft) {
    return `at this trend the check needs about ${updates}, more than the ${budgetLeft} left in the budget`;
  }
  const each = secondsEach(secondsPerUpdate);
  if (each === undefined) return `check in about ${updates} at this trend`;
  return `check in about ${durationText(each * k)} at this trend (${updates} at ${each.toFixed(1)} s each)`;
}
