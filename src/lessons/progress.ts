/**
 * Lesson progress as kept in localStorage: which checks of which lesson have passed, and which
 * lessons are done. Versioned; anything that does not match the current shape exactly is ignored
 * (a fresh start), never half-trusted.
 *
 *   { "version": 1, "lessons": { "01-mdp/01-value-iteration": { "done": true, "checks": ["value-iteration-gridworld"] } } }
 */
export const PROGRESS_KEY = 'agent-rl-lab/lesson-progress';
export const PROGRESS_VERSION = 1;

export interface LessonProgress {
  done: boolean;
  /** Ids of the lesson's checks (widgets, predictions) that have passed. */
  checks: string[];
}

export interface Progress {
  version: typeof PROGRESS_VERSION;
  lessons: Record<string, LessonProgress>;
}

export const emptyProgress = (): Progress => ({ version: PROGRESS_VERSION, lessons: {} });

const isStringArray = (x: unknown): x is string[] =>
  Array.isArray(x) && x.every((item) => typeof item === 'string');

/** The stored text → Progress; invalid or foreign data gives empty progress. */
export function parseProgress(text: string | null): Progress {
  if (text === null) return emptyProgress();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return emptyProgress();
  }
  if (typeof data !== 'object' || data === null) return emptyProgress();
  const { version, lessons } = data as { version?: unknown; lessons?: unknown };
  if (version !== PROGRESS_VERSION || typeof lessons !== 'object' || lessons === null) {
    return emptyProgress();
  }
  const result = emptyProgress();
  for (const [id, entry] of Object.entries(lessons)) {
    if (typeof entry !== 'object' || entry === null) return emptyProgress();
    const { done, checks } = entry as { done?: unknown; checks?: unknown };
    if (typeof done !== 'boolean' || !isStringArray(checks)) return emptyProgress();
    result.lessons[id] = { done, checks: [...new Set(checks)] };
  }
  return result;
}

/** Progress after `check` of `lesson` passed; the lesson is done once every check in `required` has. */
export function withCheck(
  progress: Progress,
  lesson: string,
  check: string,
  required: readonly string[],
): Progress {
  const entry = progress.lessons[lesson] ?? { done: false, checks: [] };
  const checks = entry.checks.includes(check) ? entry.checks : [...entry.checks, check];
  const done = entry.done || required.every((id) => checks.includes(id));
  return { ...progress, lessons: { ...progress.lessons, [lesson]: { done, checks } } };
}

/** Progress with `lesson` marked done (lessons without checks are marked by the reader). */
export function withDone(progress: Progress, lesson: string): Progress {
  const entry = progress.lessons[lesson] ?? { done: false, checks: [] };
  return { ...progress, lessons: { ...progress.lessons, [lesson]: { ...entry, done: true } } };
}

/** Where progress is kept (localStorage in the app, a Map in tests). */
export interface ProgressStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
