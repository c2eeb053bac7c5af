/**
 * One lesson file → a Lesson: its front matter checked field by field (lesson-head.ts), its body cut into
 * Markdown segments and directives, each directive checked against what it points at (preset,
 * check, source file and region). Every problem is a LessonError naming the file and line.
 */
import { parseCheck, type Check } from './checks';
import { parseDirective, scanBody, type Directive } from './directives';
import { LessonError } from './errors';
import { parseLessonHead, type LessonHead } from './lesson-head';
import { renderMarkdown } from './markdown';
import { regionLines, type SourceLine } from './source-views';
import { isPresetName, PRESETS, type PresetName } from './presets';

export type LessonBlock =
  | { kind: 'markdown'; html: string; line: number }
  | {
      kind: 'widget';
      /** Unique within the lesson: the preset name. */
      id: string;
      preset: PresetName;
      label: string;
      /** Settings the reader may change (the preset's free ones minus `locked`). */
      free: string[];
      check: Check;
      line: number;
    }
  | { kind: 'predict'; id: string; question: string; answer: string; line: number }
  | {
      kind: 'source';
      file: string;
      region: string;
      /** The region's lines with their numbers in the file, its markers left out. */
      lines: SourceLine[];
      caption: string;
      line: number;
    }
  | { kind: 'plot'; plot: PlotName; line: number };

/** The interactive plots: directives without attributes, each drawn by its own component. */
export const PLOTS = [
  'clip-plot',
  'gae-plot',
  'group-bias',
  'kl-plot',
  'dpo-plot',
  'clip-higher-plot',
] as const;
export type PlotName = (typeof PLOTS)[number];

/** A lesson: its checked front matter and its body rendered into blocks. */
export interface Lesson extends LessonHead {
  blocks: LessonBlock[];
}

/** Parses a lesson file and renders its body; throws a LessonError naming the file and line. */
export function parseLesson(file: string, text: string): Lesson {
  const head = parseLessonHead(file, text);
  return { ...head, blocks: parseBody(head.file, head.body, head.bodyLine) };
}

const rendered = new WeakMap<LessonHead, LessonBlock[]>();

/**
 * A catalog lesson's blocks, rendered on first use and kept: the app renders only the lessons it
 * shows (lesson pages load this module on demand).
 */
export function lessonBlocks(lesson: LessonHead): LessonBlock[] {
  let blocks = rendered.get(lesson);
  if (!blocks) {
    blocks = parseBody(lesson.file, lesson.body, lesson.bodyLine);
    rendered.set(lesson, blocks);
  }
  return blocks;
}

function parseBody(file: string, body: string, firstLine: number): LessonBlock[] {
  const blocks: LessonBlock[] = [];
  let segment: string[] = [];
  let segmentLine = firstLine;
  const ids = new Set<string>();
  const flush = (nextLine: number) => {
    if (segment.join('').trim() !== '') {
      blocks.push({
        kind: 'markdown',
        html: renderMarkdown(file, segmentLine, segment.join('\n')),
        line: segmentLine,
      });
    }
    segment = [];
    segmentLine = nextLine;
  };
  scanBody(file, body, firstLine, (text, line, isDirective) => {
    if (!isDirective) {
      segment.push(text);
      return;
    }
    flush(line + 1);
    const block = directiveBlock(file, parseDirective(file, line, text));
    if ('id' in block) {
      if (ids.has(block.id))
        throw new LessonError(file, line, `'${block.id}' appears twice in this lesson`);
      ids.add(block.id);
    }
    blocks.push(block);
  });
  flush(firstLine + body.split('\n').length);
  return blocks;
}

function directiveBlock(file: string, d: Directive): LessonBlock {
  const fail = (reason: string): never => {
    throw new LessonError(file, d.line, reason);
  };
  switch (d.name) {
    case 'widget': {
      const name = d.attrs.preset!;
      if (!isPresetName(name))
        fail(`unknown preset '${name}' (known: ${Object.keys(PRESETS).join(', ')})`);
      const preset = PRESETS[name as PresetName];
      const locked = (d.attrs.locked ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const key of locked) {
        if (!(preset.free as readonly string[]).includes(key)) {
          fail(
            `locked '${key}' is not a free setting of preset ${name} (free: ${preset.free.join(', ')})`,
          );
        }
      }
      const check = parseCheck(d.attrs.check ?? preset.check);
      if (typeof check === 'string') fail(check);
      return {
        kind: 'widget',
        id: name,
        preset: name as PresetName,
        label: d.attrs.label ?? preset.title,
        free: preset.free.filter((key) => !locked.includes(key)),
        check: check as Check,
        line: d.line,
      };
    }
    case 'predict': {
      const { question, answer } = d.attrs as { question: string; answer: string };
      if (question.trim() === '' || answer.trim() === '')
        fail('predict needs a non-empty question and answer');
      return { kind: 'predict', id: `predict-${d.line}`, question, answer, line: d.line };
    }
    case 'source': {
      const { file: shown, region } = d.attrs as { file: string; region: string };
      const lines = regionLines(shown, region);
      if (typeof lines === 'string') fail(lines);
      return {
        kind: 'source',
        file: shown,
        region,
        lines: lines as SourceLine[],
        caption: d.attrs.caption ?? '',
        line: d.line,
      };
    }
    case 'clip-plot':
    case 'gae-plot':
    case 'group-bias':
    case 'kl-plot':
    case 'dpo-plot':
    case 'clip-higher-plot':
      return { kind: 'plot', plot: d.name, line: d.line };
  }
}
