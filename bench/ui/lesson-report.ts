/**
 * The lesson-times bench's sums and table (bench/ui/lesson-times.ts drives the pages). Pure: no
 * I/O, no browser. Sums count passed widgets only, and every sum says how many widgets and
 * lessons it covers, so a short sum (a timeout, a backend that fell back, `--lessons`, `--quick`)
 * is never read as a whole one.
 */
import { formatTable } from '../core/stats';
import type { EnvResult, LessonTiming, Measurement, SuiteResult } from '../core/types';

/** The suite's name (`--suites=lesson-times`; scripts/bench.mjs knows it too). */
export const LESSON_SUITE = 'lesson-times';

/** The total over the lab's route to a trained tool-using agent (src/lessons/catalog.ts routeTo). */
export const ROUTE_TOTAL = 'route to a tool-using agent';

export type LessonBackend = LessonTiming['backend'];
export const LESSON_BACKENDS: readonly LessonBackend[] = ['cpu', 'webgpu'];

/** What the bench needs of a lesson (src/lessons/catalog.ts LESSONS, reduced to plain data). */
export interface LessonInfo {
  id: string;
  title: string;
  /** Reading time the lesson states. */
  minutes: number;
  /** Its widgets in page order. */
  widgets: { preset: string; check: string }[];
  /** On the shortest route to the tool-use lesson, the one the Lessons page shows. */
  onRoute: boolean;
}

/**
 * Lessons whose id starts with one of `prefixes`, in catalog order; all of them when `prefixes`
 * is empty. A prefix that matches no lesson is an error naming it and the ids there are.
 */
export function selectLessons(
  all: readonly LessonInfo[],
  prefixes: readonly string[],
): LessonInfo[] {
  for (const prefix of prefixes) {
    if (!all.some((l) => l.id.startsWith(prefix))) {
      throw new Error(
        `--lessons: "${prefix}" starts no lesson id; the ids are ${all.map((l) => l.id).join(', ')}`,
      );
    }
  }
  if (prefixes.length === 0) return [...all];
  return all.filter((l) => prefixes.some((prefix) => l.id.startsWith(prefix)));
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
/** Seconds to 0.01 s: a readable JSON, and fine enough for the quickest widgets (0.1 s). */
export const roundS = (s: number): number => Math.round(s * 100) / 100;

/** A row timing `t`: status ok (with `ms`) only when every widget it covers ran and passed. */
function rowOf(impl: string, t: LessonTiming, reason?: string): Measurement {
  const complete = t.passed === t.ofWidgets && t.widgets === t.ofWidgets;
  if (complete && t.seconds !== undefined) {
    return { impl, shape: {}, status: 'ok', ms: t.seconds * 1000, bytes: 0, lesson: t };
  }
  const failed = t.passed < t.widgets;
  return {
    impl,
    shape: {},
    status: failed ? 'failed' : 'skipped',
    reason: reason ?? shortBy(t),
    bytes: 0,
    lesson: t,
  };
}

function shortBy(t: LessonTiming): string {
  const parts = [`${t.passed} of ${t.ofWidgets} widgets passed`];
  if (t.widgets < t.ofWidgets) parts.push(`${t.ofWidgets - t.widgets} not run`);
  if (t.lessons !== undefined && t.ofLessons !== undefined && t.lessons < t.ofLessons) {
    parts.push(`${t.ofLessons - t.lessons} of ${t.ofLessons} lessons not run`);
  }
  return parts.join('; ');
}

/** One widget's row: `seconds` for a pass, else `failure` says why there is no time. */
export function widgetRow(
  backend: LessonBackend,
  lesson: LessonInfo,
  index: number,
  result: {
    seconds?: number;
    openSeconds?: number;
    updates?: number;
    pageBackend?: string;
    runBackend?: string;
    /** Why it has no time: 'failed' (a timeout, an error), 'skipped' (the wrong backend). */
    failure?: { status: 'failed' | 'skipped'; reason: string };
  },
): Measurement {
  const widget = lesson.widgets[index];
  if (!widget) {
    throw new Error(
      `widget index ${index} is outside ${lesson.id}'s [0, ${lesson.widgets.length})`,
    );
  }
  const passed = result.seconds !== undefined;
  const t: LessonTiming = {
    kind: 'widget',
    backend,
    lesson: lesson.id,
    statedMinutes: lesson.minutes,
    widgets: 1,
    passed: passed ? 1 : 0,
    ofWidgets: 1,
    index: index + 1,
    preset: widget.preset,
    check: widget.check,
  };
  if (result.seconds !== undefined) t.seconds = roundS(result.seconds);
  if (result.openSeconds !== undefined) t.openSeconds = roundS(result.openSeconds);
  if (result.updates !== undefined && Number.isFinite(result.updates)) t.updates = result.updates;
  if (result.pageBackend !== undefined) t.pageBackend = result.pageBackend;
  if (result.runBackend !== undefined) t.runBackend = result.runBackend;
  const impl = `${backend} ${lesson.id} #${index + 1} ${widget.preset}`;
  if (passed) return rowOf(impl, t);
  const failure = result.failure ?? { status: 'failed', reason: 'no time and no reason given' };
  return { impl, shape: {}, status: failure.status, reason: failure.reason, bytes: 0, lesson: t };
}

/** Adds up widget (or lesson) timings: seconds over passed widgets, open seconds over opened. */
function addUp(rows: readonly Measurement[]) {
  const ts = rows.flatMap((r) => (r.lesson ? [r.lesson] : []));
  const opened = ts.filter((t) => t.openSeconds !== undefined);
  return {
    seconds: roundS(sum(ts.map((t) => (t.passed > 0 ? (t.seconds ?? 0) : 0)))),
    openSeconds: opened.length ? roundS(sum(opened.map((t) => t.openSeconds!))) : undefined,
    widgets: sum(ts.map((t) => t.widgets)),
    passed: sum(ts.map((t) => t.passed)),
  };
}

/** A lesson's row: the sum of its widgets' rows (a lesson with no widget waits 0 s). */
export function lessonRow(
  backend: LessonBackend,
  lesson: LessonInfo,
  widgetRows: readonly Measurement[],
  done?: boolean,
): Measurement {
  const total = addUp(widgetRows);
  const t: LessonTiming = {
    kind: 'lesson',
    backend,
    lesson: lesson.id,
    statedMinutes: lesson.minutes,
    seconds: total.seconds,
    widgets: total.widgets,
    passed: total.passed,
    ofWidgets: lesson.widgets.length,
  };
  if (total.openSeconds !== undefined) t.openSeconds = total.openSeconds;
  if (done !== undefined) t.done = done;
  return rowOf(`${backend} ${lesson.id}`, t);
}

/**
 * The two sums the issue asks for, per backend: every lesson, and every lesson up to and
 * including the tool-use unit (a new reader's path to a trained tool-using agent). Each covers
 * the catalog's lessons, run or not: stated minutes are summed over all of them, waits over the
 * lessons run, and the row says how many were not.
 */
export function totalRows(
  backend: LessonBackend,
  catalog: readonly LessonInfo[],
  lessonRows: readonly Measurement[],
): Measurement[] {
  const route = catalog.filter((l) => l.onRoute);
  const spans: [string, readonly LessonInfo[]][] = [['all lessons', catalog]];
  if (route.length > 0) spans.push([ROUTE_TOTAL, route]);
  return spans.map(([name, covered]) => {
    const ids = new Set(covered.map((l) => l.id));
    const ran = lessonRows.filter((r) => r.lesson && ids.has(r.lesson.lesson));
    const total = addUp(ran);
    const t: LessonTiming = {
      kind: 'total',
      backend,
      lesson: name,
      statedMinutes: sum(covered.map((l) => l.minutes)),
      seconds: total.seconds,
      widgets: total.widgets,
      passed: total.passed,
      ofWidgets: sum(covered.map((l) => l.widgets.length)),
      lessons: ran.length,
      ofLessons: covered.length,
    };
    if (total.openSeconds !== undefined) t.openSeconds = total.openSeconds;
    const complete = ran.length === covered.length;
    const row = rowOf(`${backend} ${name}`, t);
    // A sum over part of the lessons is not the total, even when every widget run passed.
    return complete ? row : { ...row, status: 'skipped', ms: undefined, reason: shortBy(t) };
  });
}

// ---------------------------------------------------------------------------------------------
// Printing

const secs = (s: number | undefined) => (s === undefined ? '–' : s.toFixed(1));
const mins = (s: number) => (s / 60).toFixed(1);

/** "WebGPU — Google · swiftshader — …" → "WebGPU"; "CPU — …" → "CPU". */
function runsOn(line: string | undefined): string {
  return line?.split(' — ')[0] ?? '?';
}

export function renderLessonSuite(suite: SuiteResult): string {
  const footnotes: string[] = [];
  const note = (m: Measurement) => {
    footnotes.push(`[${footnotes.length + 1}] ${m.impl}: ${m.reason ?? m.status}`);
    return ` [${footnotes.length}]`;
  };
  const rows: string[][] = [];
  for (const m of suite.measurements) {
    const t = m.lesson;
    if (!t || t.kind === 'total') continue;
    const mark = m.status === 'ok' ? '' : note(m);
    if (t.kind === 'widget') {
      const passed = t.passed > 0;
      rows.push([
        `${t.backend} ${t.lesson}`,
        `#${t.index ?? '?'} ${t.preset ?? ''}`,
        t.check ?? '',
        runsOn(t.runBackend),
        secs(t.openSeconds),
        passed
          ? secs(t.seconds)
          : `${m.reason?.startsWith('timeout') ? 'timeout' : m.status}${mark}`,
        t.updates === undefined ? '–' : String(t.updates),
        '',
      ]);
    } else {
      const label =
        t.ofWidgets === 0 ? 'no widgets' : `= lesson (${t.passed}/${t.ofWidgets} passed)`;
      rows.push([
        `${t.backend} ${t.lesson}`,
        `${label}${t.done ? ', done' : ''}`,
        '',
        '',
        secs(t.openSeconds),
        `${m.status === 'ok' ? '' : '≥ '}${secs(t.seconds)}${mark}`,
        '',
        String(t.statedMinutes),
      ]);
    }
  }
  const header = [
    'backend lesson',
    'widget',
    'check',
    'runs on',
    'open s',
    'start→pass s',
    'updates',
    'stated min',
  ];
  return [suite.title, formatTable(header, rows), ...footnotes].join('\n');
}

/** The closing lines: per backend, the wait over all lessons and up to the tool-use lesson. */
export function renderLessonTotals(suite: SuiteResult): string[] {
  const lines: string[] = [];
  for (const m of suite.measurements) {
    const t = m.lesson;
    if (!t || t.kind !== 'total') continue;
    const wait = `waiting for experiments ${secs(t.seconds)} s (${mins(t.seconds ?? 0)} min)`;
    const opening = t.openSeconds === undefined ? '' : ` + opening runs ${secs(t.openSeconds)} s`;
    const reading = `reading (the lessons' stated minutes) ${t.statedMinutes} min`;
    const head = `${t.backend} ${t.lesson} (${t.ofLessons ?? '?'} lessons, ${t.ofWidgets} widgets)`;
    if (m.status !== 'ok') {
      lines.push(`${head}: INCOMPLETE (${m.reason ?? m.status}): ${wait} so far; ${reading}`);
      continue;
    }
    const both = t.statedMinutes + ((t.seconds ?? 0) + (t.openSeconds ?? 0)) / 60;
    const hour = t.lesson.startsWith('up to') ? `; under an hour: ${both < 60 ? 'yes' : 'no'}` : '';
    lines.push(
      `${head}: ${wait}${opening}; ${reading}; one after the other ${both.toFixed(1)} min${hour}`,
    );
  }
  return lines;
}

export function renderLessonEnv(result: EnvResult): string {
  const { env } = result;
  const lines = [`=== ${env.name}: the lesson pages in headless Chromium ===`];
  lines.push(`runtime: Chromium ${env.runtime}`, ...env.notes.map((n) => `note: ${n}`));
  for (const suite of result.suites) {
    lines.push('', renderLessonSuite(suite));
    const totals = renderLessonTotals(suite);
    if (totals.length > 0) lines.push('', 'Totals:', ...totals.map((t) => `  ${t}`));
  }
  lines.push('', `(${result.seconds.toFixed(0)} s in this environment)`);
  return lines.join('\n');
}
