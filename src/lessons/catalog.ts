/**
 * Every lesson, loaded at build time from lessons/NN-unit/NN-step/index.md, with its front matter
 * checked; a body is rendered only when a page shows it (lesson.ts lessonBlocks), so neither the
 * 100–150 ms of rendering all the lessons nor KaTeX, Markdown and the kernel sources are part of
 * every page load. Order is the folders' numeric order; prerequisites must name lessons that exist.
 */
import { LessonError } from './errors';
import { parseLessonHead, type LessonHead } from './lesson-head';

const FILES = import.meta.glob('/lessons/**/index.md', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

/** Parses and orders lessons from (path → text); throws the first LessonError. */
export function buildCatalog(files: Record<string, string>): LessonHead[] {
  const lessons = Object.entries(files)
    .map(([path, text]) => parseLessonHead(path, text))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const ids = new Set(lessons.map((l) => l.id));
  for (const lesson of lessons) {
    for (const need of lesson.prerequisites) {
      if (!ids.has(need))
        throw new LessonError(lesson.file, 1, `prerequisite '${need}' is not a lesson`);
    }
  }
  return lessons;
}

export const LESSONS: readonly LessonHead[] = buildCatalog(FILES);

export function findLesson(id: string): LessonHead | undefined {
  return LESSONS.find((lesson) => lesson.id === id);
}

/** The lessons before and after `id`, in reading order. */
export function neighbours(id: string): { prev?: LessonHead; next?: LessonHead } {
  const index = LESSONS.findIndex((lesson) => lesson.id === id);
  if (index < 0) return {};
  const result: { prev?: LessonHead; next?: LessonHead } = {};
  const prev = LESSONS[index - 1];
  const next = LESSONS[index + 1];
  if (prev) result.prev = prev;
  if (next) result.next = next;
  return result;
}

/** Unit folder (`01-mdp`) → lessons in order. */
export function lessonsByUnit(): Map<string, LessonHead[]> {
  const units = new Map<string, LessonHead[]>();
  for (const lesson of LESSONS) {
    const list = units.get(lesson.unit) ?? [];
    list.push(lesson);
    units.set(lesson.unit, list);
  }
  return units;
}

/**
 * The shortest route to a lesson: it and everything its prerequisites need, transitively, in
 * reading order. Undefined for an unknown id.
 */
export function routeTo(
  id: string,
  lessons: readonly LessonHead[] = LESSONS,
): LessonHead[] | undefined {
  const byId = new Map(lessons.map((lesson) => [lesson.id, lesson]));
  if (!byId.has(id)) return undefined;
  const needed = new Set<string>();
  const visit = (at: string) => {
    if (needed.has(at)) return;
    needed.add(at);
    for (const need of byId.get(at)?.prerequisites ?? []) visit(need);
  };
  visit(id);
  return lessons.filter((lesson) => needed.has(lesson.id));
}

/** The lesson a reader is on the way to: the first tool-use lesson (a trained tool-using agent). */
export const TOOL_USE_GOAL = '06-tool-use/01-calls-and-masks';
