/**
 * The front matter of a lesson: a small YAML subset between two `---` lines at the top of the
 * file. Supported: `key: value` with a string (bare or quoted), a number, or an inline list
 * `[a, "b, c", 3]`, and block lists (`key:` then `  - item` lines). Nothing else: anchors, nested
 * maps and multi-line strings are refused with the file and line, never guessed at.
 */
import { LessonError } from './errors';

export type FrontValue = string | number | (string | number)[];

export interface FrontMatter {
  fields: Record<string, FrontValue>;
  /** 1-based line of each key. */
  lines: Record<string, number>;
  /** The body after the closing `---`. */
  body: string;
  /** 1-based line of the body's first line in the file. */
  bodyLine: number;
}

const KEY = /^([A-Za-z][A-Za-z0-9_-]*):(?:\s+(.*))?$/;
const NUMBER = /^-?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?$/;

export function parseFrontMatter(file: string, text: string): FrontMatter {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[0]?.trim() !== '---') {
    throw new LessonError(file, 1, "front matter must open the file with a '---' line");
  }
  const fields: Record<string, FrontValue> = {};
  const keyLines: Record<string, number> = {};
  let list: { key: string; items: (string | number)[] } | undefined;
  for (let i = 1; i < lines.length; i++) {
    const raw = lines[i]!;
    const line = i + 1;
    if (raw.trim() === '---') {
      return { fields, lines: keyLines, body: lines.slice(i + 1).join('\n'), bodyLine: i + 2 };
    }
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    const item = /^\s+-\s+(.*)$/.exec(raw);
    if (item) {
      if (!list) throw new LessonError(file, line, "a list item must follow a 'key:' line");
      list.items.push(scalar(file, line, item[1]!.trim()));
      continue;
    }
    if (/^\s/.test(raw)) {
      throw new LessonError(
        file,
        line,
        'unexpected indentation (only "  - item" lines may indent)',
      );
    }
    const match = KEY.exec(raw.trimEnd());
    if (!match) throw new LessonError(file, line, `expected 'key: value', got '${raw.trim()}'`);
    const key = match[1]!;
    if (key in fields) throw new LessonError(file, line, `duplicate key '${key}'`);
    keyLines[key] = line;
    const value = (match[2] ?? '').trim();
    if (value === '') {
      const items: (string | number)[] = [];
      fields[key] = items;
      list = { key, items };
    } else {
      list = undefined;
      fields[key] = value.startsWith('[')
        ? inlineList(file, line, value)
        : scalar(file, line, value);
    }
  }
  throw new LessonError(file, lines.length, "front matter is not closed by a '---' line");
}

function scalar(file: string, line: number, value: string): string | number {
  if (value.startsWith('"') || value.startsWith("'")) {
    const quote = value[0]!;
    if (value.length < 2 || !value.endsWith(quote)) {
      throw new LessonError(file, line, `unterminated ${quote} string`);
    }
    return value.slice(1, -1);
  }
  if (NUMBER.test(value)) return Number(value);
  if (/^[[\]{}&*!|>%@`]/.test(value)) {
    throw new LessonError(file, line, `unsupported YAML syntax '${value}' (quote the string)`);
  }
  return value;
}

/** `[a, "b, c", 3]`: commas inside quotes do not split. */
function inlineList(file: string, line: number, value: string): (string | number)[] {
  if (!value.endsWith(']')) throw new LessonError(file, line, "a list must end with ']'");
  const inner = value.slice(1, -1).trim();
  if (inner === '') return [];
  const parts: string[] = [];
  let current = '';
  let quote = '';
  for (const ch of inner) {
    if (quote) {
      if (ch === quote) quote = '';
      current += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      current += ch;
    } else if (ch === ',') {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (quote) throw new LessonError(file, line, `unterminated ${quote} string in list`);
  parts.push(current.trim());
  return parts.map((part, index) => {
    if (part === '') throw new LessonError(file, line, `empty list item at index ${index}`);
    return scalar(file, line, part);
  });
}
