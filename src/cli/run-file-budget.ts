/**
 * How many updates a run file can hold and still be imported by the lab, checked before any
 * training. A CLI run file keeps every metric of every update (the lab's compare view aligns runs
 * per update; thinning would leave gaps its cumulative axes stop at), so the budget is on
 * `--updates`: a run that would write a file the lab refuses (IMPORT_LIMITS: 20 million characters,
 * a million metric values) is refused at once, naming the limit, rather than after hours of
 * training. Without `--out` nothing is written and MAX_UPDATES alone applies.
 */
import { IMPORT_LIMITS } from '../util/json-checks';
import { shownText } from '../util/shown-text';
import { FlagError } from './args';

/**
 * Most metrics one update of each algorithm reports, over every option (a KL term, a reward
 * model, a retained task and a curriculum add series). Measured with the default settings:
 * value-iteration 5, policy-iteration 6, q-learning 5, sarsa 5, reinforce 9, ppo-mlp 13,
 * grpo 26, ppo 27, dpo 7; the bounds leave room for the optional series, and a run that reports
 * more than its bound says so (tests/cli/run-file-budget.test.ts holds them to it).
 */
export const RUN_FILE_METRICS: Readonly<Record<string, number>> = {
  'value-iteration': 10,
  'policy-iteration': 10,
  'q-learning': 10,
  sarsa: 10,
  reinforce: 16,
  'ppo-mlp': 20,
  grpo: 48,
  ppo: 48,
  dpo: 48,
};

/** An algorithm not in the table (a new one) gets the largest bound. */
const DEFAULT_METRICS = 48;

/**
 * Characters one metric value takes at most in the file (writeCliRunFile indents by one space per
 * level; a series' values sit at depth 3): newline, 3 spaces, the longest shortest-round-trip
 * double (`-2.2250738585072014e-308`, 24 characters) and a comma.
 */
export const CHARS_PER_VALUE = 1 + 3 + 24 + 1;

/** Characters kept for everything but the series: settings, events, summary, names (64 KiB). */
export const RESERVED_CHARS = 64 * 1024;

export function metricsBound(algorithm: string): number {
  return Object.hasOwn(RUN_FILE_METRICS, algorithm)
    ? RUN_FILE_METRICS[algorithm]!
    : DEFAULT_METRICS;
}

/**
 * Most updates a run file of `algorithm` can hold within the lab's import limits, when `extra`
 * characters of it are taken by something else (a --init model copied into it as base64).
 */
export function maxRunFileUpdates(algorithm: string, extra = 0): number {
  const metrics = metricsBound(algorithm);
  const chars = IMPORT_LIMITS.maxChars - RESERVED_CHARS - extra;
  const byChars = Math.floor(chars / (metrics * CHARS_PER_VALUE));
  const byPoints = Math.floor(IMPORT_LIMITS.maxPoints / metrics);
  return Math.max(0, Math.min(byChars, byPoints));
}

/**
 * Refuses `--updates=<updates>` of `algorithm` when its run file would pass the lab's import
 * limits; `init` names a --init file of `initBytes` bytes that the run file copies (base64).
 */
export function checkRunFileBudget(
  algorithm: string,
  updates: number,
  init?: { path: string; bytes: number },
): void {
  const extra = init ? Math.ceil(init.bytes / 3) * 4 : 0;
  const most = maxRunFileUpdates(algorithm, extra);
  if (updates <= most) return;
  const limit =
    `the lab imports run files of at most ${IMPORT_LIMITS.maxChars.toLocaleString('en')} ` +
    `characters and ${IMPORT_LIMITS.maxPoints.toLocaleString('en')} metric values`;
  if (most === 0 && init) {
    throw new FlagError(
      'init',
      `--init=${shownText(init.path, 200)} is ${init.bytes.toLocaleString('en')} bytes; the run ` +
        `file copies it, and ${limit}: train without --out or from a smaller model`,
    );
  }
  throw new FlagError(
    'updates',
    `--updates must be at most ${most.toLocaleString('en')} for ${algorithm} with --out ` +
      `(up to ${metricsBound(algorithm)} metrics per update${init ? ', and the --init copy' : ''}; ` +
      `${limit}), got ${updates}`,
  );
}
