/**
 * A lesson file's front matter, checked field by field, and its body as text: what the table of
 * contents needs, without rendering anything (no Markdown, KaTeX or kernel sources are loaded by
 * this module, so the app's first bundle does not carry them). lesson.ts renders the body.
 */
import { LessonError } from './errors';
import { parseFrontMatter, type FrontValue } from './front-matter';

export interface LessonHead {
  /** `01-mdp/01-value-iteration`: the unit folder and the step folder. */
  id: string;
  unit: string;
  step: string;
  file: string;
  title: string;
  goals: string[];
  prerequisites: string[];
  minutes: number;
  /** The text after the front matter, and the file line it starts on. */
  body: string;
  bodyLine: number;
}

const FIELDS = ['title', 'goals', 'prerequisites', 'minutes'] as const;

/** `/lessons/01-mdp/01-value-iteration/index.md` → `01-mdp/01-value-iteration`. */
export function lessonIdOf(path: string): string | undefined {
  const match = /(?:^|\/)lessons\/(\d{2}-[a-z0-9-]+)\/(\d{2}-[a-z0-9-]+)\/index\.md$/.exec(path);
  return match ? `${match[1]}/${match[2]}` : undefined;
}

/** The front matter of a lesson file, checked; throws a LessonError naming the file and line. */
export function parseLessonHead(file: string, text: string): LessonHead {
  const id = lessonIdOf(file);
  if (!id) throw new LessonError(file, 1, 'a lesson lives at lessons/NN-unit/NN-step/index.md');
  const front = parseFrontMatter(file, text);
  for (const key of Object.keys(front.fields)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      throw new LessonError(
        file,
        front.lines[key] ?? 1,
        `unknown front-matter key '${key}' (known: ${FIELDS.join(', ')})`,
      );
    }
  }
  const field = (key: (typeof FIELDS)[number]): FrontValue => {
    const value = front.fields[key];
    if (value === undefined) throw new LessonError(file, 1, `front matter needs '${key}'`);
    return value;
  };
  const at = (key: string) => front.lines[key] ?? 1;
  const title = field('title');
  if (typeof title !== 'string' || title.trim() === '') {
    throw new LessonError(file, at('title'), 'title must be a non-empty string');
  }
  const goals = stringList(file, at('goals'), 'goals', field('goals'));
  if (goals.length === 0)
    throw new LessonError(file, at('goals'), 'goals must list at least one goal');
  const prerequisites = stringList(
    file,
    at('prerequisites'),
    'prerequisites',
    field('prerequisites'),
  );
  const minutes = field('minutes');
  if (typeof minutes !== 'number' || !(minutes > 0) || minutes > 600) {
    throw new LessonError(
      file,
      at('minutes'),
      `minutes must be a number in (0, 600], got ${String(minutes)}`,
    );
  }
  const [unit, step] = id.split('/') as [string, string];
  return {
    id,
    unit,
    step,
    file,
    title,
    goals,
    prerequisites,
    minutes,
    body: front.body,
    bodyLine: front.bodyLine,
  };
}

function stringList(file: string, line: number, key: string, value: FrontValue): string[] {
  if (!Array.isArray(value)) throw new LessonError(file, line, `${key} must be a list`);
  return value.map((item, index) => {
    if (typeof item !== 'string') {
      throw new LessonError(file, line, `${key}[${index}] must be a string, got ${item}`);
    }
    return item;
  });
}
