/**
 * How long a reader waits for each lesson's experiments on this machine, per backend
 * (`npm run bench -- --suites=lesson-times`, opt-in: the full set takes long). Driven from Node
 * like frames.ts: the system Chromium, headless, on the app served by the bench's Vite server.
 *
 * For each backend, for each lesson (catalog order, `--lessons=` prefixes), in a fresh browser
 * context (empty IndexedDB and localStorage, so no progress or run is left from before):
 * open `#/learn/<id>`, then for each widget in page order, one after another as a reader would:
 * click "Start" (one click opens the run and starts it), time the set-up until the run trains
 * ("open s"), then the training until the widget's check shows "passed ✓" (in the page: a click
 * listener and a MutationObserver, so the time does not depend on how often the driver polls). A widget that has not passed after
 * `--widget-timeout` seconds is paused and recorded as a timeout with the updates it reached.
 *
 * Backends. 'webgpu': Chromium with WebGPU on (scripts/chromium.mjs; SwiftShader on a machine
 * without a GPU) and `?backend=webgpu`, which takes a software fallback adapter that the default
 * 'auto' passes over. 'cpu': the same Chromium without `--enable-unsafe-webgpu`, so no adapter
 * exists, and `?backend=cpu`. The URL option should decide every run, but the bench does not
 * take that on trust: every row records two lines: the page's (its footer) and the
 * run's own, read from the run the app stored in IndexedDB (the widget does not show it; the lab
 * does, from the same record). A row whose run is on another backend than the one asked for is
 * skipped with the line as its reason, never timed under the wrong name. Presets that always
 * train on the CPU (environment algorithms) are timed under both, marked "runs on CPU".
 *
 * `--quick`: the first widget of the first two selected lessons that have one. This is a
 * measurement, printed and saved, never an assertion.
 */
import os from 'node:os';
import { chromium, errors, type Browser, type Locator, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, findChromium } from '../../scripts/chromium.mjs';
import { LESSONS, routeTo, TOOL_USE_GOAL } from '../../src/lessons/catalog';
import { lessonBlocks } from '../../src/lessons/lesson';
import { isPresetName, PRESETS } from '../../src/lessons/presets';
import type { EnvResult, Measurement, SuiteResult } from '../core/types';
import {
  LESSON_BACKENDS,
  LESSON_SUITE,
  lessonRow,
  selectLessons,
  totalRows,
  ROUTE_TOTAL,
  widgetRow,
  type LessonBackend,
  type LessonInfo,
} from './lesson-report';

type Log = (line: string) => void;

const VIEWPORT = { width: 1280, height: 800 };
/** The first visit waits for Vite to transform the app's modules; opening a run, the worker's. */
const PAGE_TIMEOUT_MS = 180_000;
const OPEN_TIMEOUT_MS = 180_000;
const DEFAULT_WIDGET_TIMEOUT_S = 180;

/** The flags as scripts/bench.mjs passes them (raw text, checked here). */
export interface LessonTimesFlags {
  quick: boolean;
  /** `--lessons=03-ppo,04-grpo/01`: lesson id prefixes. */
  lessons?: string;
  /** `--backends=cpu,webgpu`. */
  backends?: string;
  /** `--widget-timeout=180`: seconds from Start. */
  widgetTimeout?: string;
}

export interface LessonTimesOptions {
  quick: boolean;
  prefixes: string[];
  backends: LessonBackend[];
  widgetTimeoutS: number;
}

/** Checks the flags; a bad one is an error naming the flag, what it got and what it takes. */
export function parseLessonTimesFlags(flags: LessonTimesFlags): LessonTimesOptions {
  const list = (text: string | undefined) =>
    (text ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const backends = list(flags.backends);
  for (const b of backends) {
    if (!(LESSON_BACKENDS as readonly string[]).includes(b)) {
      throw new Error(`--backends: "${b}" is not one of ${LESSON_BACKENDS.join(', ')}`);
    }
  }
  let widgetTimeoutS = DEFAULT_WIDGET_TIMEOUT_S;
  if (flags.widgetTimeout !== undefined) {
    widgetTimeoutS = Number(flags.widgetTimeout);
    if (!Number.isFinite(widgetTimeoutS) || widgetTimeoutS <= 0) {
      throw new Error(
        `--widget-timeout: "${flags.widgetTimeout}" is not a number of seconds above 0`,
      );
    }
  }
  return {
    quick: flags.quick,
    prefixes: list(flags.lessons),
    backends: backends.length ? ([...new Set(backends)] as LessonBackend[]) : [...LESSON_BACKENDS],
    widgetTimeoutS,
  };
}

/** The catalog as plain data: ids, titles, stated minutes, widgets with their checks. */
export function lessonInfos(): LessonInfo[] {
  const route = new Set((routeTo(TOOL_USE_GOAL) ?? []).map((lesson) => lesson.id));
  return LESSONS.map((lesson) => ({
    id: lesson.id,
    title: lesson.title,
    minutes: lesson.minutes,
    widgets: lessonBlocks(lesson).flatMap((b) =>
      b.kind === 'widget' ? [{ preset: b.preset, check: b.check.text }] : [],
    ),
    onRoute: route.has(lesson.id),
  }));
}

/** Lessons to run and, per lesson, how many of its widgets (all; the first one with --quick). */
function plan(catalog: LessonInfo[], options: LessonTimesOptions) {
  const selected = selectLessons(catalog, options.prefixes);
  if (!options.quick) return selected.map((lesson) => ({ lesson, widgets: lesson.widgets.length }));
  return selected
    .filter((lesson) => lesson.widgets.length > 0)
    .slice(0, 2)
    .map((lesson) => ({ lesson, widgets: 1 }));
}

export async function runLessonTimes(
  baseUrl: string,
  flags: LessonTimesFlags,
  log: Log,
): Promise<EnvResult> {
  const options = parseLessonTimesFlags(flags);
  const start = performance.now();
  const catalog = lessonInfos();
  const todo = plan(catalog, options);
  const executablePath = findChromium();
  if (!executablePath) throw new Error('no Chromium found (run `npm run setup:chromium`)');
  const cpus = os.cpus();
  const notes = [
    `machine: ${cpus.length} × ${cpus[0]?.model ?? 'unknown CPU'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average (1, 5, 15 min) at the start: ${loadAverage()}`,
    `lessons: ${todo.map((t) => `${t.lesson.id}${t.widgets < t.lesson.widgets.length ? ` (${t.widgets} of ${t.lesson.widgets.length} widgets)` : ''}`).join(', ')}`,
  ];
  const measurements: Measurement[] = [];
  let runtime = 'unknown';
  let software = false;
  for (const backend of options.backends) {
    const args =
      backend === 'cpu'
        ? CHROMIUM_ARGS.filter((a) => a !== '--enable-unsafe-webgpu')
        : CHROMIUM_ARGS;
    notes.push(`${backend}: Chromium ${args.join(' ')}, ?backend=${backend}`);
    log(`backend ${backend}: ${todo.length} lessons`);
    const browser = await chromium.launch({ executablePath, args, headless: true });
    runtime = browser.version();
    try {
      await warmUp(browser, baseUrl, backend, todo[0]?.lesson, log, notes);
      const lessonRows: Measurement[] = [];
      for (const { lesson, widgets } of todo) {
        log(`${backend} ${lesson.id}: ${widgets} widget${widgets === 1 ? '' : 's'}`);
        const rows = await timeLesson(browser, baseUrl, backend, lesson, widgets, options, log);
        measurements.push(...rows);
        lessonRows.push(rows.at(-1)!);
        const line = rows.find((r) => r.lesson?.pageBackend)?.lesson?.pageBackend;
        if (backend === 'webgpu' && line?.startsWith('WebGPU')) {
          software ||=
            /swiftshader|llvmpipe|software/i.test(line) || line.includes('— fallback adapter —');
        }
      }
      measurements.push(...totalRows(backend, catalog, lessonRows));
    } finally {
      await browser.close();
    }
    notes.push(`load average after ${backend}: ${loadAverage()}`);
  }
  for (const line of new Set(measurements.flatMap((m) => [m.lesson?.pageBackend ?? '']))) {
    if (line) notes.push(`page backend line seen: ${line}`);
  }
  for (const line of new Set(measurements.flatMap((m) => [m.lesson?.runBackend ?? '']))) {
    if (line) notes.push(`run backend line seen: ${line}`);
  }
  return {
    env: { name: 'chromium-lessons', software, runtime, notes },
    suites: [suiteOf(measurements, options)],
    seconds: (performance.now() - start) / 1000,
  };
}

function suiteOf(measurements: Measurement[], options: LessonTimesOptions): SuiteResult {
  return {
    suite: LESSON_SUITE,
    title: `How long a reader waits for each lesson's experiments (per backend; widget timeout ${options.widgetTimeoutS} s)`,
    notes: [
      'per lesson, a fresh browser context; per widget, one after another: "Start" (one click opens the run and starts it), the set-up until the run trains (open s), and the time from then until the check shows passed (start→pass s: a click listener and a MutationObserver in the page)',
      'updates: what the widget showed when its check passed, or at the timeout; a timed-out run is paused before the next widget',
      'lesson and total rows sum passed widgets only and say what they miss; "stated min" is the reading time the lesson gives',
      `totals: every lesson, and the ${ROUTE_TOTAL} (${TOOL_USE_GOAL} and its prerequisites, as the Lessons page shows it); "one after the other" adds reading, opening and waiting, though a reader may read while a run trains`,
      'cpu: Chromium without --enable-unsafe-webgpu (no adapter) and ?backend=cpu; webgpu: with it and ?backend=webgpu (any adapter: SwiftShader where there is no GPU). A run on another backend than asked for is skipped with its backend line as the reason',
      "the app's production bundle, built and served as `npm start` serves it; other work on the machine slows the runs: see the load averages",
    ],
    baseline: 'cpu all lessons',
    measurements,
  };
}

/**
 * Loads the app once and opens one run, so that Vite's first transform of the app's and the
 * run worker's modules is not counted in the first lesson's times.
 */
async function warmUp(
  browser: Browser,
  baseUrl: string,
  backend: LessonBackend,
  lesson: LessonInfo | undefined,
  log: Log,
  notes: string[],
): Promise<void> {
  if (!lesson || lesson.widgets.length === 0) return;
  const context = await browser.newContext({ viewport: VIEWPORT });
  try {
    const t0 = performance.now();
    const page = await openLesson(context.newPage(), baseUrl, backend, lesson, log);
    const widget = page.getByTestId('lesson-widget').first();
    await widget.getByRole('button', { name: 'Start' }).click();
    await untilReady(widget, OPEN_TIMEOUT_MS);
    await widget.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
    const s = (performance.now() - t0) / 1000;
    log(`${backend} warm-up (load ${lesson.id}, open its first run): ${s.toFixed(1)} s`);
    notes.push(`${backend}: warm-up load and first open took ${s.toFixed(1)} s (not counted)`);
  } catch (error) {
    log(`${backend} warm-up failed (the first lesson's times include module loading): ${error}`);
  } finally {
    await context.close();
  }
}

/** One lesson on one backend: its widgets' rows, then the lesson's row (always last). */
async function timeLesson(
  browser: Browser,
  baseUrl: string,
  backend: LessonBackend,
  lesson: LessonInfo,
  count: number,
  options: LessonTimesOptions,
  log: Log,
): Promise<Measurement[]> {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const rows: Measurement[] = [];
  const notRun = (reason: string, from: number) => {
    for (let i = from; i < count; i++) {
      rows.push(widgetRow(backend, lesson, i, { failure: { status: 'failed', reason } }));
    }
  };
  try {
    let page: Page;
    let pageBackend: { kind: string; line: string };
    try {
      page = await openLesson(context.newPage(), baseUrl, backend, lesson, log);
      pageBackend = await backendLine(page);
    } catch (error) {
      notRun(`the lesson page did not load: ${message(error)}`, 0);
      return [...rows, lessonRow(backend, lesson, rows)];
    }
    const shown = await page.getByTestId('lesson-widget').count();
    if (shown !== lesson.widgets.length) {
      notRun(`the page shows ${shown} widgets, the catalog lists ${lesson.widgets.length}`, 0);
      return [...rows, lessonRow(backend, lesson, rows)];
    }
    if (pageBackend.kind !== backend) {
      const reason = `${backend} asked for, but the page shows: ${pageBackend.line}`;
      for (let i = 0; i < count; i++) {
        rows.push(
          widgetRow(backend, lesson, i, {
            pageBackend: pageBackend.line,
            failure: { status: 'skipped', reason },
          }),
        );
      }
      return [...rows, lessonRow(backend, lesson, rows)];
    }
    for (let i = 0; i < count; i++) {
      const row = await timeWidget(page, backend, lesson, i, options, pageBackend.line);
      const t = row.lesson;
      log(
        `  #${i + 1} ${t?.preset}: ${row.status === 'ok' ? `passed ${t?.seconds} s after Start (${t?.updates} updates; opened in ${t?.openSeconds} s)` : `${row.status}: ${row.reason}`}`,
      );
      rows.push(row);
    }
    const done =
      count === lesson.widgets.length && count > 0
        ? await page.getByTestId('lesson-done').isVisible()
        : undefined;
    return [...rows, lessonRow(backend, lesson, rows, done)];
  } finally {
    await context.close();
  }
}

async function timeWidget(
  page: Page,
  backend: LessonBackend,
  lesson: LessonInfo,
  index: number,
  options: LessonTimesOptions,
  pageBackend: string,
): Promise<Measurement> {
  const info = lesson.widgets[index]!;
  const widget = page.getByTestId('lesson-widget').nth(index);
  const fail = (status: 'failed' | 'skipped', reason: string, extra = {}) =>
    widgetRow(backend, lesson, index, { pageBackend, ...extra, failure: { status, reason } });
  const preset = await widget.getAttribute('data-preset');
  if (preset !== info.preset) {
    return fail(
      'failed',
      `widget #${index + 1} shows preset "${preset}", the catalog "${info.preset}"`,
    );
  }

  await page.evaluate(watchWidget, index);
  const t0 = performance.now();
  try {
    await widget.getByRole('button', { name: 'Start' }).click();
    await untilReady(widget, OPEN_TIMEOUT_MS);
  } catch (error) {
    return fail('failed', `opening the run: ${message(error)}`);
  }
  const openSeconds = (performance.now() - t0) / 1000;
  const runBackend = await runBackendLine(page, index + 1);
  const known = { openSeconds, ...(runBackend === undefined ? {} : { runBackend }) };
  const runKind = runBackend?.startsWith('WebGPU')
    ? 'webgpu'
    : runBackend?.startsWith('CPU')
      ? 'cpu'
      : undefined;
  const cpuByDesign = isPresetName(info.preset) && PRESETS[info.preset].backend === 'cpu';
  if (runKind === undefined) {
    return fail('failed', "the run's backend line was not found in the app's stored runs", known);
  }
  if (runKind !== backend && !(backend === 'webgpu' && cpuByDesign)) {
    await widget.getByRole('button', { name: 'Pause' }).dispatchEvent('click');
    return fail('skipped', `${backend} asked for, but the run uses: ${runBackend}`, known);
  }

  let settled: WidgetWatch;
  try {
    const handle = await page.waitForFunction(widgetSettled, index, {
      polling: 500,
      timeout: options.widgetTimeoutS * 1000,
    });
    settled = (await handle.jsonValue()) as WidgetWatch;
  } catch (error) {
    if (!(error instanceof errors.TimeoutError)) {
      return fail('failed', `waiting for the check: ${message(error)}`, known);
    }
    const updates = await page.evaluate(widgetUpdates, index);
    await widget
      .getByRole('button', { name: 'Pause' })
      .click()
      .catch(() => {});
    return fail(
      'failed',
      `timeout: not passed ${options.widgetTimeoutS} s after Start, at ${updates} updates`,
      { ...known, updates },
    );
  }
  if (settled.error !== undefined) {
    return fail('failed', `the run stopped with an error: ${settled.error}`, {
      ...known,
      updates: settled.updates,
    });
  }
  const trainingFrom = settled.runningAt ?? settled.startAt;
  if (trainingFrom === undefined || settled.passAt === undefined) {
    return fail('failed', 'the page recorded no Start click or no pass', known);
  }
  return widgetRow(backend, lesson, index, {
    ...known,
    pageBackend,
    seconds: (settled.passAt - trainingFrom) / 1000,
    updates: settled.updates,
  });
}

// ---------------------------------------------------------------------------------------------
// Page helpers (driver side)

async function openLesson(
  pending: Promise<Page>,
  baseUrl: string,
  backend: LessonBackend,
  lesson: LessonInfo,
  log: Log,
): Promise<Page> {
  const page = await pending;
  let broken: string | undefined;
  page.on('pageerror', (error) => {
    broken ??= error.message;
    log(`page error: ${error.message}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') log(`console error: ${m.text()}`);
  });
  const query = `?backend=${backend}`;
  await page.goto(`${baseUrl}/${query}#/learn/${lesson.id}`);
  const title = page.locator('#lesson-title');
  // A page error before the title shows (a lesson file that does not parse stops the whole app)
  // ends the wait at once instead of after the timeout.
  await until(
    'the lesson title',
    async () => broken !== undefined || title.isVisible(),
    PAGE_TIMEOUT_MS,
  );
  if (!(await title.isVisible())) throw new Error(`the page failed: ${broken}`);
  return page;
}

/** The page's backend line (footer) once its probe has answered. */
async function backendLine(page: Page): Promise<{ kind: string; line: string }> {
  const footer = page.getByTestId('backend-line');
  await until(
    'the page backend line',
    async () => (await footer.getAttribute('data-backend')) !== 'pending',
    60_000,
  );
  const kind = (await footer.getAttribute('data-backend')) ?? '?';
  const text = ((await footer.textContent()) ?? '').replace(/^\s*Compute:\s*/, '').trim();
  return { kind, line: text };
}

/** Waits until a started widget's run is set up (it trains, or has paused); throws its error. */
async function untilReady(widget: Locator, timeoutMs: number): Promise<void> {
  await until(
    'the run to be ready',
    async () => {
      const alert = widget.getByRole('alert');
      if ((await alert.count()) > 0) throw new Error((await alert.textContent()) ?? 'an error');
      const status = widget.getByTestId('widget-status');
      if ((await status.count()) === 0) return false;
      const text = ((await status.textContent()) ?? '').trim();
      if (text === 'error') throw new Error('the run is in error');
      return text === 'running' || text === 'idle' || text === 'paused';
    },
    timeoutMs,
  );
}

/**
 * The backend line of the `n`-th run this page opened, as the app stored it (it saves a run once
 * its worker is built, and every second while it trains). Polled briefly: the save is async.
 */
async function runBackendLine(page: Page, n: number): Promise<string | undefined> {
  const end = performance.now() + 15_000;
  while (performance.now() < end) {
    const runs = await page.evaluate(storedRunBackends);
    const line = runs.find((r) => r.id === `run-${n}`)?.backendLine;
    if (line) return line;
    await sleep(250);
  }
  return undefined;
}

/** Polls `check` until it is true; throws naming `what` after `timeoutMs`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number) {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) {
      throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    }
    await sleep(250);
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function loadAverage(): string {
  return os
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');
}

// ---------------------------------------------------------------------------------------------
// In the page: handed to page.evaluate / waitForFunction, which send their source text. They must
// stay self-contained (no imports, no closures over module values).

interface WidgetWatch {
  /** performance.now() at the Start click, when the run first trained, and when it passed. */
  startAt?: number;
  runningAt?: number;
  passAt?: number;
  updates?: number;
  /** Set when the run ended in error instead (the widget's alert text). */
  error?: string;
}

declare global {
  interface Window {
    __lessonWatch?: WidgetWatch;
  }
}

/** Watches widget `index`: the Start click's time, and the first time its check says passed. */
function watchWidget(index: number): void {
  const widget = document.querySelectorAll('[data-testid="lesson-widget"]')[index];
  if (!widget) throw new Error(`no lesson widget #${index + 1}`);
  const start = [...widget.querySelectorAll('button')].find(
    (b) => b.textContent?.trim() === 'Start',
  );
  if (!start) throw new Error(`widget #${index + 1} has no Start button`);
  const watch: WidgetWatch = {};
  window.__lessonWatch = watch;
  start.addEventListener('click', () => (watch.startAt ??= performance.now()), { once: true });
  const check = widget.querySelector('[data-testid="widget-check"]');
  if (!check) throw new Error(`widget #${index + 1} has no check line`);
  const observer = new MutationObserver(() => {
    const status = widget.querySelector('[data-testid="widget-status"]')?.textContent?.trim();
    if (status === 'running') watch.runningAt ??= performance.now();
    if (watch.passAt !== undefined || !(check.textContent ?? '').includes('passed ✓')) return;
    watch.passAt = performance.now();
    watch.updates = Number(/(\d+) updates/.exec(widget.textContent ?? '')?.[1] ?? NaN);
    observer.disconnect();
  });
  observer.observe(widget, { subtree: true, childList: true, characterData: true });
}

/** For waitForFunction: the watch once the check passed or the run failed, else false. */
function widgetSettled(index: number): WidgetWatch | false {
  const watch = window.__lessonWatch;
  if (watch?.passAt !== undefined) return { ...watch };
  const widget = document.querySelectorAll('[data-testid="lesson-widget"]')[index];
  const status = widget?.querySelector('[data-testid="widget-status"]')?.textContent?.trim();
  const alert = widget?.querySelector('[role="alert"]')?.textContent?.trim();
  if (status === 'error' || alert) {
    const updates = Number(/(\d+) updates/.exec(widget?.textContent ?? '')?.[1] ?? NaN);
    return { ...watch, updates, error: alert || 'status error' };
  }
  return false;
}

/** The updates widget `index` shows now. */
function widgetUpdates(index: number): number {
  const widget = document.querySelectorAll('[data-testid="lesson-widget"]')[index];
  return Number(/(\d+) updates/.exec(widget?.textContent ?? '')?.[1] ?? NaN);
}

/**
 * The app's stored runs (src/state/run-store.ts: database 'agent-rl-lab', store 'runs'): id and
 * backend line. Opens the database only once the app has created it: opening a missing one here
 * would create it without its store, and the app's own open would then find no upgrade to run.
 */
async function storedRunBackends(): Promise<{ id: string; backendLine?: string }[]> {
  const names = (await indexedDB.databases()).map((d) => d.name);
  if (!names.includes('agent-rl-lab')) return [];
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open('agent-rl-lab');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error ?? new Error('IndexedDB open failed'));
  });
  try {
    if (!db.objectStoreNames.contains('runs')) return [];
    const all = await new Promise<unknown[]>((resolve, reject) => {
      const req = db.transaction('runs', 'readonly').objectStore('runs').getAll();
      req.onsuccess = () => resolve(req.result as unknown[]);
      req.onerror = () => reject(req.error ?? new Error('IndexedDB read failed'));
    });
    return all.map((r) => {
      const run = r as { id: string; backendLine?: string };
      return { id: run.id, ...(run.backendLine ? { backendLine: run.backendLine } : {}) };
    });
  } finally {
    db.close();
  }
}
