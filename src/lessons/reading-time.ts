/**
 * How long a lesson takes a reader, estimated from what is on its page: the words to read, the
 * equations to work through, and the things to do (predict, read a source view, move a plot's sliders,
 * open and watch a run). A lesson's front matter states its minutes; tests hold each stated figure
 * to this estimate, so the table of contents and the route's total follow the text as it changes
 * instead of numbers typed once.
 *
 * The rates are assumptions, stated here so they can be argued with: 150 words a minute is a
 * careful pace for technical prose (typical silent reading of non-fiction is about 240; formulas
 * and definitions slow a reader down), and the per-item minutes are the time to think about a
 * prediction before revealing it, to read a dozen lines of code, to try a plot's sliders, and to
 * open a run, start it, watch its charts and try one setting. A run's own training time is not
 * added: on this project's CPU the runs of a lesson take seconds to about a minute, and a reader
 * reads on while one trains (README "Lessons" gives the measured times per lesson).
 *
 * Works on the raw body (no Markdown or KaTeX rendering), so the table of contents can use it.
 */
import { parseDirective, scanBody, type DirectiveName } from './directives';

export const READING_RATES = {
  /** Prose, including the reference list and a prediction's question and answer. */
  wordsPerMinute: 150,
  /** Minutes per item (a seeds block counts one widget per preset). */
  displayEquation: 0.5,
  predict: 1,
  source: 1,
  plot: 2,
  widget: 2,
} as const;

export interface ReadingEstimate {
  /** Words of prose (an inline formula counts as one word). */
  words: number;
  /** `$$…$$` blocks. */
  equations: number;
  predicts: number;
  /** Source views: excerpts of the lab's code. */
  sources: number;
  plots: number;
  widgets: number;
  /** Reading plus doing, unrounded. */
  minutes: number;
}

const DISPLAY_MATH = /\$\$[\s\S]*?\$\$/g;
/** Inline math does not span lines in the lessons (the renderer does not allow it either). */
const INLINE_MATH = /\$[^$\n]+\$/g;
/** `[text](url)` → text: a link's address is not read. */
const LINK = /\[([^\]]*)\]\([^)]*\)/g;

/** Counts the words in a run of text: tokens with at least one letter or digit. */
export function countWords(text: string): number {
  return text.split(/\s+/).filter((token) => /[\p{L}\p{N}]/u.test(token)).length;
}

/**
 * The estimate for a lesson body (the text after its front matter, which starts on file line
 * `firstLine`). `file` and the line name the place in the LessonError a malformed directive or an
 * unclosed code fence raises.
 */
export function estimateReading(file: string, body: string, firstLine = 1): ReadingEstimate {
  const counts: Record<'predicts' | 'sources' | 'plots' | 'widgets', number> = {
    predicts: 0,
    sources: 0,
    plots: 0,
    widgets: 0,
  };
  const prose: string[] = [];
  scanBody(file, body, firstLine, (text, line, isDirective) => {
    if (!isDirective) {
      prose.push(text);
      return;
    }
    const directive = parseDirective(file, line, text);
    // A seeds block is one run per preset to open, start and watch (its seeds train together).
    counts[kindOf(directive.name)] +=
      directive.name === 'seeds'
        ? (directive.attrs.presets ?? '').split(',').filter((s) => s.trim()).length
        : 1;
    if (directive.name === 'predict') {
      prose.push(directive.attrs.question ?? '', directive.attrs.answer ?? '');
    }
  });
  const text = prose.join('\n');
  const equations = text.match(DISPLAY_MATH)?.length ?? 0;
  const words = countWords(
    text.replace(DISPLAY_MATH, ' ').replace(INLINE_MATH, ' math ').replace(LINK, '$1'),
  );
  const r = READING_RATES;
  const minutes =
    words / r.wordsPerMinute +
    equations * r.displayEquation +
    counts.predicts * r.predict +
    counts.sources * r.source +
    counts.plots * r.plot +
    counts.widgets * r.widget;
  return { words, equations, ...counts, minutes };
}

function kindOf(name: DirectiveName): 'predicts' | 'sources' | 'plots' | 'widgets' {
  if (name === 'predict') return 'predicts';
  if (name === 'source') return 'sources';
  if (name === 'widget' || name === 'seeds') return 'widgets';
  return 'plots';
}

/** What the estimate counted, for the lesson page: "741 words, 2 equations, 1 prediction, …". */
export function describeEstimate(e: ReadingEstimate): string {
  const parts: [number, string, string][] = [
    [e.words, 'word', 'words'],
    [e.equations, 'equation', 'equations'],
    [e.predicts, 'prediction', 'predictions'],
    [e.sources, 'source view', 'source views'],
    [e.plots, 'interactive plot', 'interactive plots'],
    [e.widgets, 'run', 'runs'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`)
    .join(', ');
}
