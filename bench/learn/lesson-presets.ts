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
import { metricCheckPassed } from '../../src/lessons/checks';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks } from '../../src/lessons/lesson';
import { PRESETS, type PresetName } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import { runPreset } from './preset-run';

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
  name: PresetName,
  check: Parameters<typeof metricCheckPassed>[0],
  backend: 'cpu' | 'webgpu',
  options: { maxUpdates: number; maxSeconds: number },
): Promise<LessonPresetRow> {
  const run = await runPreset(name, {
    backend,
    metrics: [check.metric],
    budget: options.maxUpdates,
    maxSeconds: options.maxSeconds,
    stop: (series) => metricCheckPassed(check, series[check.metric]!),
  });
  return {
    lesson,
    preset: name,
    check: check.text,
    passedAt: run.stopped ? run.updates : null,
    updates: run.updates,
    seconds: run.seconds,
    setupSeconds: run.setupSeconds,
    backendLine: run.backendLine,
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
