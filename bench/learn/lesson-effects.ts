/**
 * The lessons' language-model widgets as claims with controls: each preset run headless through
 * the lab's run host over several seeds, each to its widget's check or its budget, beside its
 * matched control (the preset's `control`: the same seeds and prompts with lr 1e-9 or the
 * lesson's mechanism off) run for the whole budget. A claim holds when every seed passes and no
 * control does; the table gives the spread that the threshold was chosen against.
 *
 * Used by `npm run bench:learn -- --only=lessons` (5 seeds, every widget) and by the learning
 * tests in tests/lessons (3 seeds, the essential checks).
 */
import {
  baselineMean,
  checkedValue,
  metricCheckPassed,
  windowMean,
  type MetricCheck,
} from '../../src/lessons/checks';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks, lessonWidgets } from '../../src/lessons/lesson';
import {
  isPresetName,
  presetBudget,
  PRESETS,
  type LessonPreset,
  type PresetControl,
  type PresetName,
} from '../../src/lessons/presets';
import { SHIPPED_MODELS } from '../../src/worker/shipped-models';
import {
  fmt,
  fmtControlValues,
  fmtMeanSd,
  fmtPassedAt,
  fmtStart,
  summariseEffect,
} from './effect-summary';
import { lmMetricWidgets } from './lm-widgets';
import { runPreset } from './preset-run';

/** One run of a preset or of its control on one seed. */
export interface SeedRun {
  seed: number;
  /** The update at which the check first passed; null: not within the run. */
  passedAt: number | null;
  updates: number;
  /** The check's own value at the end (the gain for a gain check); null: too few updates. */
  value: number | null;
  /** Mean of the first 5 values (the start as the run measured it). */
  start: number | null;
  /** Mean of the last 10 values. */
  end: number | null;
  /** Tokens the policy generated over the run (perf/generated_tokens summed). */
  tokens: number;
  /** From asking for the run to its last update (the pass, for a preset run). */
  seconds: number;
  /** The process's CPU time over the same span (see PresetRun.cpuSeconds). */
  cpuSeconds: number;
  setupSeconds: number;
}

export interface EffectRow {
  lesson: string;
  preset: PresetName;
  check: string;
  /** The updates the check is claimed within; the control runs all of them. */
  budget: number;
  control: string;
  /** The shipped start's sampled pass@1 and pass@G, when the preset starts from one. */
  start: { passAt1: number; passAtG: number; groupSize: number } | null;
  runs: SeedRun[];
  controls: SeedRun[];
  /** The preset's second control (`alsoControl`), run as the first is; the claim must beat both. */
  also?: { control: string; controls: SeedRun[] };
  backendLine: string;
}

/**
 * The metric check the lessons hold `name` to — a widget's or a seeds block's: the first, or the
 * one whose text is `check`.
 */
export function widgetCheck(name: PresetName, check?: string): MetricCheck {
  const found = LESSONS.flatMap((l) => lessonWidgets(lessonBlocks(l))).find(
    (b) =>
      b.preset === name &&
      b.check.kind === 'metric' &&
      (check === undefined || b.check.text === check),
  );
  if (found?.check.kind !== 'metric') {
    throw new Error(`no widget or seeds block runs ${name} with a metric check ${check ?? ''}`);
  }
  return found.check;
}

/**
 * Runs one seed: the preset to its check (stopping there), or one of its controls through the
 * whole budget (stopping only if it passes).
 */
async function seedRun(
  name: PresetName,
  check: MetricCheck,
  seed: number,
  backend: 'cpu' | 'webgpu',
  control: PresetControl | undefined,
  budget: number,
): Promise<{ run: SeedRun; backendLine: string }> {
  const run = await runPreset(name, {
    backend,
    seed,
    metrics: [check.metric, 'perf/generated_tokens'],
    budget,
    change: control?.config,
    taskOptions: control?.taskOptions,
    // A preset run stops at its pass; a control only when it passes (a failed claim either way).
    stop: (series) => metricCheckPassed(check, series[check.metric]!),
  });
  const values = run.series[check.metric]!;
  return {
    run: {
      seed,
      passedAt: run.stopped ? run.updates : null,
      updates: run.updates,
      value: checkedValue(check, values) ?? null,
      start: baselineMean(values) ?? null,
      end: windowMean(values) ?? null,
      tokens: run.series['perf/generated_tokens']!.reduce((a, b) => a + (b ?? 0), 0),
      seconds: run.seconds,
      cpuSeconds: run.cpuSeconds,
      setupSeconds: run.setupSeconds,
    },
    backendLine: run.backendLine,
  };
}

export interface EffectOptions {
  seeds: readonly number[];
  backend: 'cpu' | 'webgpu';
  /**
   * How far each control runs: the whole budget (the bench), or only to the update at which the
   * preset passed on that seed (the tests: by then the control must not have passed).
   */
  controlRuns?: 'budget' | 'to-pass';
  /**
   * Also run a preset's second control (`alsoControl`), default true. The learning tests leave it
   * to the bench: a third run of every seed would take them past a minute of CPU each.
   */
  alsoControl?: boolean;
  /** Replaces every preset's budget (a quick look; the claims are made at the presets' own). */
  budget?: number;
  log?: (s: string) => void;
}

export async function presetEffect(
  lesson: string,
  name: PresetName,
  check: MetricCheck,
  options: EffectOptions,
): Promise<EffectRow> {
  const preset: LessonPreset = PRESETS[name];
  const budget = options.budget ?? presetBudget(name);
  const log = options.log ?? (() => {});
  if (!preset.control) throw new Error(`${name} has no control`);
  const runs: SeedRun[] = [];
  const controls: SeedRun[] = [];
  const alsoControls: SeedRun[] = [];
  let backendLine = '';
  for (const seed of options.seeds) {
    const { run, backendLine: line } = await seedRun(
      name,
      check,
      seed,
      options.backend,
      undefined,
      budget,
    );
    backendLine = line;
    runs.push(run);
    const controlBudget =
      options.controlRuns === 'to-pass' && run.passedAt !== null ? run.passedAt : budget;
    const { run: control } = await seedRun(
      name,
      check,
      seed,
      options.backend,
      preset.control,
      controlBudget,
    );
    controls.push(control);
    const also =
      preset.alsoControl && options.alsoControl !== false
        ? (await seedRun(name, check, seed, options.backend, preset.alsoControl, controlBudget)).run
        : undefined;
    if (also) alsoControls.push(also);
    log(
      `${name} seed ${seed}: ${run.passedAt === null ? `not passed in ${run.updates}` : `passed at ${run.passedAt}`} ` +
        `(${run.seconds.toFixed(1)} s, CPU ${run.cpuSeconds.toFixed(1)} s, value ${fmt(run.value)}); control ` +
        `${control.passedAt === null ? 'failed' : `PASSED at ${control.passedAt}`} (value ${fmt(control.value)})` +
        (also
          ? `; ${preset.alsoControl!.what}: ${also.passedAt === null ? 'failed' : `PASSED at ${also.passedAt}`} (value ${fmt(also.value)})`
          : ''),
    );
  }
  const init = preset.init;
  const model =
    init?.kind === 'shipped' ? SHIPPED_MODELS.find((m) => m.name === init.model) : undefined;
  return {
    lesson,
    preset: name,
    check: check.text,
    budget,
    control: preset.control.what,
    start: model?.sampled
      ? {
          passAt1: model.sampled.passAt1,
          passAtG: model.sampled.passAtG,
          groupSize: model.sampled.groupSize,
        }
      : null,
    runs,
    controls,
    ...(preset.alsoControl && options.alsoControl !== false
      ? { also: { control: preset.alsoControl.what, controls: alsoControls } }
      : {}),
    backendLine,
  };
}

/** Every language-model widget of the lessons asked for (all, by default), with its control. */
export async function lessonEffects(
  options: EffectOptions & { lessons?: string[]; presets?: string[] },
): Promise<{ rows: EffectRow[]; table: string }> {
  const unknown = options.presets?.filter((p) => !isPresetName(p)) ?? [];
  if (unknown.length) {
    throw new Error(
      `--presets names no preset: ${unknown.join(', ')} (see src/lessons/presets.ts)`,
    );
  }
  // A preset is measured as a widget of a lesson (its check is the widget's): one that no lesson
  // opens could never give a row. (One that another lesson than those chosen opens is left out.)
  const opened = new Set(LESSONS.flatMap((l) => lmMetricWidgets(l).map((b) => b.preset)));
  const unopened = options.presets?.filter((p) => !opened.has(p as PresetName)) ?? [];
  if (unopened.length) {
    throw new Error(
      `--presets names ${unopened.join(', ')}, which no language-model widget of a lesson ` +
        'opens: put the preset in a lesson (::widget or ::seeds) to measure it',
    );
  }
  const rows: EffectRow[] = [];
  // A preset and check that two widgets share (ppo-copy in its own lesson and in the side by
  // side) is measured once: the same seeds give the same runs, so a second measurement would only
  // double the bench's time. Its row is repeated under the second lesson.
  const measured = new Map<string, EffectRow>();
  for (const lesson of LESSONS) {
    if (options.lessons && !options.lessons.some((p) => lesson.id.startsWith(p))) continue;
    for (const block of lmMetricWidgets(lesson)) {
      if (options.presets && !options.presets.includes(block.preset)) continue;
      const key = `${block.preset} ${block.check.text}`;
      const earlier = measured.get(key);
      if (earlier) {
        options.log?.(`${block.preset} in ${lesson.id}: measured in ${earlier.lesson}, reused`);
        rows.push({ ...earlier, lesson: lesson.id });
        continue;
      }
      const row = await presetEffect(lesson.id, block.preset, block.check, options);
      measured.set(key, row);
      rows.push(row);
    }
  }
  return { rows, table: renderEffects(rows) };
}

/**
 * One line per widget and control (a preset with a second control gets a second line, its own
 * columns repeated): the claim holds when every seed passed and no run of any of its controls did.
 * Δ is the check's value (the gain for a gain check, the window's level otherwise): for the
 * preset at its pass, for the control at the end of its budget; of the controls' values the one
 * nearest the threshold (the max for a `>=` check, the min for `<=`).
 */
export function renderEffects(rows: readonly EffectRow[]): string {
  const lines = [
    '| lesson | preset | check | start pass@1 / pass@G | passed | updates to check (median, range) | s to check (median) | CPU s to check (median) | Δ at check | control | control passed | control Δ (max or min) | holds |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const s = summariseEffect(r);
    for (const c of s.controls) {
      lines.push(
        `| ${r.lesson} | ${r.preset} | ${r.check} | ${fmtStart(r.start)} ` +
          `| ${s.passed}/${s.runs} | ${fmtPassedAt(s, r.budget)} ` +
          `| ${s.medianSeconds === null ? '—' : s.medianSeconds.toFixed(1)} ` +
          `| ${s.medianCpuSeconds === null ? '—' : s.medianCpuSeconds.toFixed(1)} ` +
          `| ${fmtMeanSd(s.valuesAtCheck)} | ${c.control} ` +
          `| ${c.passed}/${c.runs} | ${fmtControlValues(c, s.closestIs)} ` +
          `| ${s.holds ? 'yes' : 'NO'} |`,
      );
    }
  }
  return lines.join('\n');
}
