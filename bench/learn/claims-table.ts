/**
 * The README's tables of lesson claims, rendered from the lessons bench's result files instead of
 * copied by hand: `npm run bench:learn -- --readme` rewrites them in README.md between the
 * `<!-- claims-table:NAME:start -->` and `…:end -->` markers, and tests/bench/claims-table.test.ts
 * fails when the README and the committed results part ways.
 *
 * A row is one language-model widget of the lessons with its current check (a preset that two
 * lessons open with the same check is one row). Its numbers come from the newest result file
 * under bench/results (newest by the timestamp in the name) that ran that preset with that check
 * on the CPU, not as --quick: a check that changes needs a new run before its row has numbers
 * again, and a new run of one preset moves only that preset's row.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { LESSONS } from '../../src/lessons/catalog';
import type { MetricCheck } from '../../src/lessons/checks';
import type { PresetName } from '../../src/lessons/presets';
import { fmtControlValues, fmtPassedAt, fmtStart, summariseEffect } from './effect-summary';
import type { EffectRow } from './lesson-effects';
import { lmMetricWidgets } from './lm-widgets';

export const TABLES = ['learning', 'failure-modes'] as const;
export type TableName = (typeof TABLES)[number];

/**
 * The lessons whose widgets show a failure and its remedy (KL, dynamic sampling, reward hacking,
 * learned rewards, reading a run): their table has every check, levels included. The other
 * lessons' widgets are the learning claims, effects only: a level check there (the curriculum
 * run today) is not a claim of learning, and the README says so in prose.
 */
const FAILURE_MODE_LESSONS = ['04-grpo/03', '04-grpo/05', '05-', '07-'];

export interface ClaimWidget {
  /** Every lesson that opens the preset with this check, in reading order. */
  lessons: string[];
  preset: PresetName;
  check: MetricCheck;
}

/** The lessons' language-model widgets with metric checks, one per (preset, check), per table. */
export function claimWidgets(): Record<TableName, ClaimWidget[]> {
  const tables: Record<TableName, ClaimWidget[]> = { learning: [], 'failure-modes': [] };
  const seen = new Map<string, ClaimWidget>();
  for (const lesson of LESSONS) {
    for (const block of lmMetricWidgets(lesson)) {
      const key = `${block.preset} ${block.check.text}`;
      const known = seen.get(key);
      if (known) {
        if (!known.lessons.includes(lesson.id)) known.lessons.push(lesson.id);
        continue;
      }
      const widget = { lessons: [lesson.id], preset: block.preset, check: block.check };
      seen.set(key, widget);
      if (FAILURE_MODE_LESSONS.some((p) => lesson.id.startsWith(p))) {
        tables['failure-modes'].push(widget);
      } else if (block.check.gain) tables.learning.push(widget);
    }
  }
  return tables;
}

/** A result file's lessons rows, as the bench saved them (results.lessons.rows). */
export interface ResultFile {
  /** The file's name under bench/results, without `.json`. */
  name: string;
  /** Milliseconds since 1970, from the timestamp in the name. */
  time: number;
  rows: EffectRow[];
}

/**
 * The time in a result file's name: `learn-2026-12-05T17-29-39-948Z.json` (as the bench names
 * them) or `learn-lessons-2026-12-05T16-35-00Z-what.json` (merged by hand, no milliseconds).
 */
export function resultTime(name: string): number | undefined {
  const m = /(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})(?:-(\d{3}))?Z/.exec(name);
  if (!m) return undefined;
  return Date.parse(`${m[1]}T${m[2]}:${m[3]}:${m[4]}.${m[5] ?? '000'}Z`);
}

/**
 * The result files of the lessons bench run on the CPU at the presets' own budgets, newest
 * first. Files (name → parsed JSON) other than a lessons run are left out: other benches, runs
 * on a WebGPU adapter (the tables claim CPU times), --quick runs (a budget of 5), and rows from
 * before the bench recorded every seed.
 */
export function lessonResults(files: Record<string, unknown>): ResultFile[] {
  const out: ResultFile[] = [];
  for (const [file, json] of Object.entries(files)) {
    const name = file.replace(/\.json$/, '');
    const time = resultTime(name);
    if (time === undefined) throw new Error(`${file}: no timestamp in the name`);
    const data = json as {
      quick?: boolean;
      results?: { lessons?: { backend?: string; rows?: unknown } };
    };
    const lessons = data.results?.lessons;
    if (data.quick === true || lessons?.backend !== 'cpu' || !Array.isArray(lessons.rows)) {
      continue;
    }
    const rows = (lessons.rows as Partial<EffectRow>[]).filter(
      (r): r is EffectRow => Array.isArray(r.runs) && Array.isArray(r.controls),
    );
    if (rows.length) out.push({ name, time, rows });
  }
  return out.sort((a, b) => b.time - a.time || (a.name < b.name ? 1 : -1));
}

/** bench/results/learn-*.json, read from disk. */
export function readLessonResults(
  dir: URL = new URL('../results/', import.meta.url),
): ResultFile[] {
  const files: Record<string, unknown> = {};
  for (const name of readdirSync(dir)) {
    if (!/^learn-.*\.json$/.test(name)) continue;
    files[name] = JSON.parse(readFileSync(new URL(name, dir), 'utf8'));
  }
  return lessonResults(files);
}

const lessonNumber = (id: string) => {
  const m = /^(\d+)-[^/]*\/(\d+)-/.exec(id);
  return m ? `${m[1]}/${m[2]}` : id;
};

const HEADER = [
  'lesson widget',
  'check',
  'start pass@1 / pass@G',
  'passed',
  'updates to check (median, range)',
  'CPU s to check (median)',
  'control',
  'control passed',
  'control Δ (mean ± sd, max or min)',
  'result file',
];

/** One widget's cells from the newest file that ran its preset with its check. */
function widgetCells(widget: ClaimWidget, files: readonly ResultFile[]): string[] {
  const label = `${widget.lessons.map(lessonNumber).join(', ')} \`${widget.preset}\``;
  const check = `\`${widget.check.text}\`${widget.check.gain ? '' : ' (a level)'}`;
  for (const file of files) {
    const row = file.rows.find((r) => r.preset === widget.preset && r.check === widget.check.text);
    if (!row) continue;
    const s = summariseEffect(row);
    const each = (f: (c: (typeof s.controls)[number]) => string) => s.controls.map(f).join('; ');
    return [
      label,
      check,
      fmtStart(row.start),
      `${s.passed}/${s.runs}`,
      fmtPassedAt(s, row.budget),
      s.medianCpuSeconds === null ? '—' : s.medianCpuSeconds.toFixed(1),
      each((c) => c.control),
      each((c) => `${c.passed}/${c.runs}`),
      each((c) => fmtControlValues(c, s.closestIs)),
      file.name,
    ];
  }
  return [label, check, '—', '—', '—', '—', '—', '—', '—', 'no run of this check yet'];
}

/**
 * Cells as one Markdown table, padded as prettier pads it (every column as wide as its widest
 * cell, at least 3), so `prettier --check README.md` passes on the rendering as written.
 */
export function markdownTable(header: readonly string[], rows: readonly string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function renderClaimsTable(
  widgets: readonly ClaimWidget[],
  files: readonly ResultFile[],
): string {
  return markdownTable(
    HEADER,
    widgets.map((w) => widgetCells(w, files)),
  );
}

const marker = (table: string, end: 'start' | 'end') => `<!-- claims-table:${table}:${end} -->`;

/** What stands between a table's markers in `text` (undefined when a marker is missing). */
export function readmeBlock(text: string, table: string): string | undefined {
  const start = text.indexOf(marker(table, 'start'));
  const end = text.indexOf(marker(table, 'end'));
  if (start < 0 || end < start) return undefined;
  return text.slice(start + marker(table, 'start').length, end);
}

/** The block a table is written as between its markers. */
export const tableBlock = (table: string) => `\n\n${table}\n\n`;

/** `text` with the table between its markers replaced. */
export function replaceReadmeBlock(text: string, table: string, rendered: string): string {
  const old = readmeBlock(text, table);
  if (old === undefined) {
    throw new Error(`README.md has no ${marker(table, 'start')} … ${marker(table, 'end')}`);
  }
  const at = text.indexOf(marker(table, 'start')) + marker(table, 'start').length;
  return text.slice(0, at) + tableBlock(rendered) + text.slice(at + old.length);
}

/** Every table, rendered from the result files on disk. */
export function renderClaimsTables(
  files: readonly ResultFile[] = readLessonResults(),
): Record<TableName, string> {
  const widgets = claimWidgets();
  return {
    learning: renderClaimsTable(widgets.learning, files),
    'failure-modes': renderClaimsTable(widgets['failure-modes'], files),
  };
}

/** Rewrites README.md's claims tables; returns the names of those that changed. */
export function writeReadmeClaims(
  readme: URL = new URL('../../README.md', import.meta.url),
): TableName[] {
  const before = readFileSync(readme, 'utf8');
  const tables = renderClaimsTables();
  let text = before;
  const changed: TableName[] = [];
  for (const name of TABLES) {
    const next = replaceReadmeBlock(text, name, tables[name]);
    if (next !== text) changed.push(name);
    text = next;
  }
  if (text !== before) writeFileSync(readme, text);
  return changed;
}
