/**
 * Which of a run's updates the inspector can open besides its last: the first it made, and the
 * rise — the update whose metric gained most over the update before it, where a run that learns
 * shows groups with mixed rewards and advantages that are not zero. After a check passes, the
 * last update alone (every reward 1, every advantage 0) has nothing to teach. At most one of
 * each is kept (MAX_KEPT in all), so memory stays bounded however long a run trains; the last
 * update is read live from the trainer (or kept with a stored run) and is not held here.
 *
 * Pure functions: the worker keeps updates as they come (run-host.ts), and the page merges a
 * worker's list with the one a stored run kept (a run brought back from storage starts a fresh
 * worker, whose "first" is only where it resumed).
 */

export type KeptRole = 'first' | 'rise';

export interface Kept<T> {
  role: KeptRole;
  /** The update it was read at. */
  step: number;
  /** The rise: its metric's gain over the update before (undefined for 'first'). */
  gain?: number;
  /** The rise: the metric that gained. */
  metric?: string;
  item: T;
}

/** Updates kept besides the last: one per role. */
export const MAX_KEPT = 2;

/**
 * The kept updates once update `step` has come with `gain` (its metric's change over the
 * previous update; undefined without one): it becomes 'first' when there is none, and 'rise'
 * when its gain is positive and larger than the kept rise's (a tie keeps the earlier). `read`
 * gives the update's item, called at most once and only when the update is kept; `metric`
 * names what the gain is in.
 */
export function keepUpdate<T>(
  kept: readonly Kept<T>[],
  step: number,
  gain: number | undefined,
  read: () => T | undefined,
  metric?: string,
): Kept<T>[] {
  const first = kept.find((k) => k.role === 'first');
  const rise = kept.find((k) => k.role === 'rise');
  const takesFirst = first === undefined;
  const takesRise =
    gain !== undefined && Number.isFinite(gain) && gain > 0 && (!rise || gain > rise.gain!);
  if (!takesFirst && !takesRise) return [...kept];
  const item = read();
  if (item === undefined) return [...kept];
  const next: Kept<T>[] = [];
  next.push(takesFirst ? { role: 'first', step, item } : first!);
  if (takesRise) next.push({ role: 'rise', step, gain, ...(metric ? { metric } : {}), item });
  else if (rise) next.push(rise);
  return next;
}

/**
 * One list from two keepings of the same run (a stored run's and its new worker's): the earlier
 * first, the larger rise (a tie keeps the earlier update).
 */
export function mergeKept<T>(a: readonly Kept<T>[], b: readonly Kept<T>[]): Kept<T>[] {
  const all = [...a, ...b];
  const firsts = all.filter((k) => k.role === 'first').sort((x, y) => x.step - y.step);
  const rises = all
    .filter((k) => k.role === 'rise')
    .sort((x, y) => y.gain! - x.gain! || x.step - y.step);
  return [...firsts.slice(0, 1), ...rises.slice(0, 1)];
}
