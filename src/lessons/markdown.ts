/**
 * Lesson Markdown to HTML: `marked` for the prose, KaTeX for `$…$` (inline) and `$$…$$` (display)
 * math, rendered to HTML strings (no script runs). A formula KaTeX cannot parse is a LessonError
 * naming the lesson file and the line the formula is on.
 */
import katex from 'katex';
import { Marked, type TokenizerAndRendererExtension } from 'marked';
import { LessonError } from './errors';
import { errorText } from '../util/error-text';

interface MathToken {
  type: 'mathBlock' | 'mathInline';
  raw: string;
  text: string;
}

function tex(text: string, displayMode: boolean, where: { file: string; line: number }): string {
  try {
    return katex.renderToString(text, { displayMode, throwOnError: true, output: 'htmlAndMathml' });
  } catch (error) {
    const reason = errorText(error);
    throw new LessonError(where.file, where.line, `math '${text}' does not render: ${reason}`);
  }
}

/** Renders one Markdown segment that starts at `line` of `file`. */
export function renderMarkdown(file: string, line: number, source: string): string {
  // Math tokens do not know their line: find the formula's first occurrence in the segment.
  const lineOf = (raw: string) => {
    const at = source.indexOf(raw);
    return line + (at < 0 ? 0 : source.slice(0, at).split('\n').length - 1);
  };
  const mathBlock: TokenizerAndRendererExtension = {
    name: 'mathBlock',
    level: 'block',
    start: (src) => src.indexOf('$$'),
    tokenizer(src) {
      const match = /^\$\$([\s\S]+?)\$\$[ \t]*(?:\n|$)/.exec(src);
      if (match) return { type: 'mathBlock', raw: match[0], text: match[1]!.trim() };
      return undefined;
    },
    renderer: (token) => {
      const t = token as unknown as MathToken;
      return `<div class="math-display">${tex(t.text, true, { file, line: lineOf(t.raw) })}</div>\n`;
    },
  };
  const mathInline: TokenizerAndRendererExtension = {
    name: 'mathInline',
    level: 'inline',
    start: (src) => src.indexOf('$'),
    tokenizer(src) {
      const match = /^\$(?!\$)((?:\\\$|[^$\n])+?)\$/.exec(src);
      if (match) return { type: 'mathInline', raw: match[0], text: match[1]! };
      return undefined;
    },
    renderer: (token) => {
      const t = token as unknown as MathToken;
      return tex(t.text, false, { file, line: lineOf(t.raw) });
    },
  };
  const marked = new Marked({ async: false, gfm: true });
  marked.use({ extensions: [mathBlock, mathInline] });
  return marked.parse(source) as string;
}
