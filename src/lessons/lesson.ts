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

/** One preset run with its check: a `::widget`, or one preset of a `::seeds` block. */
export interface WidgetBlock {
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

/**
 * Presets side by side over several seeds: every preset × seed run, charted as each preset's mean
 * ± std over its seeds. Each preset is a WidgetBlock (settings fixed: `free` is empty), so what
 * reads the lessons' preset claims (lessonWidgets) finds them as it finds a widget's.
 */
export interface SeedsBlock {
  kind: 'seeds';
  /** Unique within the lesson: 'seeds:' and the presets, e.g. 'seeds:ppo-copy,grpo-copy'. */
  id: string;
  label: string;
  /** The metric charted for every preset. */
  metric: string;
  /** The seeds every preset runs with, in the order written. */
  seeds: number[];
  /** One per preset, in the order written. */
  presets: WidgetBlock[];
  line: number;
}

/** Presets × seeds a `::seeds` block may open: the lab keeps at most 8 runs alive at once. */
export const MAX_SEED_RUNS = 8;

export type LessonBlock =
  | { kind: 'markdown'; html: string; line: number }
  | WidgetBlock
  | SeedsBlock
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
  'lora-run',
] as const;
export type PlotName = (typeof PLOTS)[number];

/**
 * Every preset run with a check among the blocks: the widgets, and each preset of a seeds block
 * (what the learning tests and benchmarks hold to its check).
 */
export function lessonWidgets(blocks: readonly LessonBlock[]): WidgetBlock[] {
  return blocks.flatMap((b) => (b.kind === 'widget' ? [b] : b.kind === 'seeds' ? b.presets : []));
}

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
    case 'seeds':
      return seedsBlock(d, fail);
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
    case 'lora-run':
      return { kind: 'plot', plot: d.name, line: d.line };
  }
}

/** A `::seeds` directive's block: known, distinct presets and seeds, one metric they all log. */
function seedsBlock(d: Directive, fail: (reason: string) => never): SeedsBlock {
  const list = (key: string) =>
    d.attrs[key]!.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const names = list('presets');
  if (names.length < 2)
    fail(`seeds needs at least 2 presets to set side by side, got ${names.length}`);
  for (const name of names) {
    if (!isPresetName(name))
      fail(`unknown preset '${name}' in seeds (known: ${Object.keys(PRESETS).join(', ')})`);
  }
  if (new Set(names).size !== names.length)
    fail(`a preset appears twice in seeds: '${d.attrs.presets}'`);
  const seedTexts = list('seeds');
  const seeds = seedTexts.map(Number);
  seedTexts.forEach((text, i) => {
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(seeds[i]))
      fail(`seeds must be whole numbers ≥ 0, separated by commas; got '${text}'`);
  });
  // A band needs a spread: with one seed a mean is that run, and its std is undefined.
  if (seeds.length < 2) fail(`seeds needs at least 2 seeds for a mean ± std, got ${seeds.length}`);
  if (new Set(seeds).size !== seeds.length) fail(`a seed appears twice: '${d.attrs.seeds}'`);
  if (names.length * seeds.length > MAX_SEED_RUNS) {
    fail(
      `${names.length} presets × ${seeds.length} seeds is ${names.length * seeds.length} runs; ` +
        `the lab keeps at most ${MAX_SEED_RUNS} alive at once`,
    );
  }
  const presets = names as PresetName[];
  const keyMetrics = [...new Set(presets.map((name) => PRESETS[name].keyMetric))];
  const metric = d.attrs.metric ?? (keyMetrics.length === 1 ? keyMetrics[0]! : undefined);
  if (metric === undefined) {
    fail(
      `the presets chart different metrics (${keyMetrics.join(', ')}): name one with metric="…"`,
    );
  }
  if (!/^[A-Za-z_][\w/.-]*$/.test(metric!)) fail(`'${metric}' is not a metric name`);
  const widgets = presets.map((name): WidgetBlock => {
    const check = parseCheck(d.attrs.check ?? PRESETS[name].check);
    if (typeof check === 'string') fail(`${name}: ${check}`);
    // The block judges its runs from their streamed series; a path check needs each run's grid.
    if ((check as Check).kind !== 'metric') fail(`${name}: seeds takes metric checks only`);
    return {
      kind: 'widget',
      id: name,
      preset: name,
      label: PRESETS[name].title,
      free: [],
      check: check as Check,
      line: d.line,
    };
  });
  return {
    kind: 'seeds',
    id: `seeds:${presets.join(',')}`,
    label: d.attrs.label ?? presets.join(' and '),
    metric: metric!,
    seeds,
    presets: widgets,
    line: d.line,
  };
}
