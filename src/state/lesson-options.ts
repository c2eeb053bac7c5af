/**
 * Options a lesson link carries in the hash's own query, after the path:
 * `#/learn/03-ppo/01-clipped-objective?classroom=1`. They live in the hash, not in location.search,
 * so a shared or projected link keeps them and following a lesson link can pass them on.
 *
 * The hash is untrusted text (anyone can send a link): it is split and decoded by URLSearchParams,
 * never evaluated, and no input makes these functions throw.
 */
import { splitHash } from '../util/hash-query';

export interface LessonOptions {
  /**
   * Classroom mode: every widget run uses the lesson's preset exactly, and the settings panels are
   * hidden. On only for `classroom=1`; any other value (`true`, `0`, empty, repeated with a
   * different value) reads as off, so a mangled link falls back to the normal page.
   */
  classroom: boolean;
}

/** `#/learn/01-mdp/01-value-iteration?classroom=1` → `{ classroom: true }`. Never throws. */
export function parseLessonOptions(hash: string): LessonOptions {
  const values = splitHash(hash).params.getAll('classroom');
  return { classroom: values.length > 0 && values.every((value) => value === '1') };
}

/** The query suffix for `options`: `?classroom=1`, or '' when every option is off. */
export function lessonQuery(options: Partial<LessonOptions> = {}): string {
  return options.classroom ? '?classroom=1' : '';
}

/**
 * `hash` with the given options set or cleared, its path and any other query keys kept in their
 * order: `withLessonOptions('#/learn?x=2', { classroom: true })` → `#/learn?x=2&classroom=1`.
 * An option left out of `options` is left as it is in the hash.
 */
export function withLessonOptions(hash: string, options: Partial<LessonOptions>): string {
  const { path, params } = splitHash(hash);
  if (options.classroom !== undefined) {
    params.delete('classroom');
    if (options.classroom) params.append('classroom', '1');
  }
  const query = params.toString();
  return `${path || '#/'}${query ? `?${query}` : ''}`;
}
