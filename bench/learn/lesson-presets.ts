/**
 * The lessons' language-model widgets, headless: each preset run through the lab's own run host
 * (shipped start, warm-up, reward model and all) on one backend, stepped until its widget's check
 * passes, and timed. The Chromium lesson-times bench (bench/ui/lesson-times.ts) measures what a
 * reader waits for in the page; this one needs no browser, so it also runs where only Node and a
 * GPU driver exist (Dawn on the machine's Vulkan driver).
 *
 * Environment algorithms (tabular methods, PPO on CartPole) always train on the CPU and are left
 * out; so are path checks, which only those use. A measurement, never an assertion.
 */
import { readFileSync } from 'node:fs';
import { metricCheckPassed } from '../../src/lessons/checks';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks } from '../../src/lessons/lesson';
import { buildPresetSpec, PRESETS } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import { createRunHost } from '../../src/worker/run-host';

const MODELS_DIR = new URL('../../public/models/', import.meta.url);

export interface LessonPresetRow {
  lesson: string;
  preset: string;
  check: string;
  /** The update at which the check passed; null: not within the budget. */
  passedAt: number | null;
  updates: number;
  /** From asking for the run to the check passing (or the budget running out). */
  seconds: number;
  /** Set-up alone: model, shipped start, warm-up, reward model. */
  setupSeconds: number;
  /** The run's own backend line (adapter or CPU, and why). */
  backendLine: string;
}

export async function lessonPresetTimes(
  backend: 'cpu' | 'webgpu',
  options: {
    maxUpdates: number;
    maxSeconds: number;
    lessons?: string[];
    log?: (s: string) => void;
  },
): Promise<{ rows: LessonPresetRow[]; table: string }> {
  const log = options.log ?? console.log;
  const rows: LessonPresetRow[] = [];
  for (const lesson of LESSONS) {
    if (options.lessons && !options.lessons.some((p) => lesson.id.startsWith(p))) continue;
    for (const block of lessonBlocks(lesson)) {
      if (block.kind !== 'widget' || block.check.kind !== 'metric') continue;
      const preset = PRESETS[block.preset];
      const algo = ALGORITHMS[preset.algo]!;
      if (algo.family !== 'lm') continue;
      const row = await timeWidget(lesson.id, block.preset, block.check, backend, options);
      rows.push(row);
      log(
        `${row.lesson} ${row.preset}: ${row.check} ${row.passedAt === null ? `not passed in ${row.updates} updates` : `at update ${row.passedAt}`}, ${row.seconds.toFixed(1)} s (set-up ${row.setupSeconds.toFixed(1)} s) — ${row.backendLine}`,
      );
    }
  }
  return { rows, table: renderTable(rows) };
}

async function timeWidget(
  lesson: string,
  name: keyof typeof PRESETS,
  check: Parameters<typeof metricCheckPassed>[0],
  backend: 'cpu' | 'webgpu',
  options: { maxUpdates: number; maxSeconds: number },
): Promise<LessonPresetRow> {
  const spec = {
    ...buildPresetSpec(name, ALGORITHMS[PRESETS[name].algo]!.defaults),
    backend,
  };
  const values: number[] = [];
  let backendLine = '(no backend message)';
  const started = performance.now();
  const host = createRunHost({
    flushMs: 1,
    lm: { readShipped: async (file) => new Uint8Array(readFileSync(new URL(file, MODELS_DIR))) },
  });
  await host.createRun(spec, (m) => {
    if (m.type === 'backend') backendLine = m.line;
    if (m.type !== 'update') return;
    for (const p of m.points) values.push(p.metrics[check.metric]!);
  });
  const setupSeconds = (performance.now() - started) / 1000;
  let passedAt: number | null = null;
  let updates = 0;
  while (updates < options.maxUpdates) {
    await host.step();
    updates += 1;
    if (metricCheckPassed(check, values)) {
      passedAt = updates;
      break;
    }
    if ((performance.now() - started) / 1000 > options.maxSeconds) break;
  }
  const seconds = (performance.now() - started) / 1000;
  await host.dispose();
  return {
    lesson,
    preset: name,
    check: check.text,
    passedAt,
    updates,
    seconds,
    setupSeconds,
    backendLine,
  };
}

function renderTable(rows: LessonPresetRow[]): string {
  const lines = [
    '| lesson | preset | check | passed at | seconds (set-up) |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.lesson} | ${r.preset} | ${r.check} | ${r.passedAt ?? `not in ${r.updates}`} | ${r.seconds.toFixed(1)} (${r.setupSeconds.toFixed(1)}) |`,
    ),
  ];
  const total = rows.reduce((s, r) => s + r.seconds, 0);
  lines.push(`| all | | | | ${total.toFixed(1)} |`);
  return lines.join('\n');
}
