/**
 * Language-model lesson presets, run as the lab runs them, each to its check — and a control that
 * must not reach the check by the update the preset did, on the preset's own seed (1). The claims
 * over seeds 1–5 are `npm run bench:learn -- --only=lessons`'s. Shared by the preset-<lesson>.test.ts
 * files, one lesson's presets each; every check, budget and control is the preset's own, read from
 * src/lessons/presets.ts.
 */
import { describe, expect, it } from 'vitest';
import { widgetCheck } from '../../bench/learn/lesson-effects';
import { runPreset } from '../../bench/learn/preset-run';
import { metricCheckPassed } from '../../src/lessons/checks';
import { preset, presetBudget, type PresetName } from '../../src/lessons/presets';
import type { Settings } from '../../src/worker/run-protocol';

export { widgetCheck };

/**
 * Drives a language-model preset through the lab's own path (the run host builds the run from the
 * preset's spec, shipped start included, and steps it; bench/learn/preset-run.ts) on the CPU for
 * up to `budget` updates, and returns the series of `metrics`. `change` alters settings first (the
 * controls below); `stop` ends the run early once it holds for the series so far.
 */
export async function presetSeries(
  name: PresetName,
  metrics: readonly string[],
  budget: number,
  change: Settings = {},
  stop: (series: Record<string, number[]>) => boolean = () => false,
): Promise<Record<string, number[]>> {
  const run = await runPreset(name, { backend: 'cpu', metrics, budget, change, stop });
  return run.series;
}

/** The first update at which a metric check passes on a series (Infinity: never). */
export function firstPass(check: ReturnType<typeof widgetCheck>, values: readonly number[]) {
  for (let n = 1; n <= values.length; n++) {
    if (metricCheckPassed(check, values.slice(0, n))) return n;
  }
  return Infinity;
}

/**
 * The update at which the preset's widget check first passes, within `budget` (Infinity: not);
 * `change` alters settings first (the controls below).
 */
export async function updatesToCheck(
  name: PresetName,
  check: string,
  budget: number,
  change: Settings = {},
): Promise<number> {
  const widget = widgetCheck(name, check);
  const started = performance.now();
  const series = await presetSeries(name, [widget.metric], budget, change, (s) =>
    metricCheckPassed(widget, s[widget.metric]!),
  );
  const update = firstPass(widget, series[widget.metric]!);
  const seconds = (performance.now() - started) / 1000;
  const what = Object.keys(change).length ? ` with ${JSON.stringify(change)}` : '';
  console.log(`${name}${what}: ${check} after ${update} updates, ${seconds.toFixed(1)} s`);
  return update;
}

/**
 * Each preset passes its check within its budget; its control (the settings it changes) has not
 * passed by the update the preset did.
 */
export function presetTests(names: PresetName[]): void {
  const rows = names.map((name) => {
    const { check, control } = preset(name);
    const change = control?.config;
    if (control && (!change || control.taskOptions)) {
      throw new Error(`${name}: its control changes task options, which presetTests cannot run`);
    }
    return [name, check, presetBudget(name), change ?? null] as const;
  });
  describe('language-model presets reach their checks on CPU, and a control does not', () => {
    it.each(rows)(
      '%s reaches %s within %i updates; not with %o',
      async (name, check, budget, control) => {
        const passed = await updatesToCheck(name, check, budget);
        expect(passed).toBeLessThanOrEqual(budget);
        if (control) expect(await updatesToCheck(name, check, passed, control)).toBe(Infinity);
      },
      600_000,
    );
  });
}

/** The widget check of a preset: its own check, from presets.ts. */
const presetCheck = (name: PresetName) => widgetCheck(name, preset(name).check);

/**
 * The learned-reward-model lesson's two widgets, each the other's control: against the reward
 * model alone strict accuracy falls by 0.3 or more; with the KL penalty it has not fallen by 0.1
 * at update 20 (on seed 1 the two runs are 0.52 apart there). Each run is made once
 * (preset-reward-model, preset-reward-model-kl) and judged by both checks.
 */
export const REWARD_MODEL_LESSON = {
  strict: 'reward/strict_accuracy',
  model: 'reward/model',
  collapse: () => presetCheck('grpo-copy-rm'),
  holds: () => presetCheck('grpo-copy-rm-kl'),
};

/**
 * The reward-hacking lesson's two widgets: under the gameable reward the share of answers cut at
 * the token limit rises by 0.8; with overlong shaping it has not risen by 0.05 at update 25. The
 * shaped run's control (shaping off) is the gamed run itself, so one run serves both checks
 * (preset-reward-hacking).
 */
export const REWARD_HACKING_LESSON = {
  clipped: 'response_length/clip_ratio',
  gamed: () => presetCheck('grpo-copy-gamed'),
  capped: () => presetCheck('grpo-copy-counterweight'),
};

/**
 * Stops a run once `check` has passed on `metric` and the run has at least `least` updates: long
 * enough to judge a partner widget's `after` check on the same series.
 */
export function passedAndAtLeast(
  check: ReturnType<typeof widgetCheck>,
  metric: string,
  least: number,
): (series: Record<string, number[]>) => boolean {
  return (s) => s[metric]!.length >= least && metricCheckPassed(check, s[metric]!);
}

/**
 * The forgetting lesson's two widgets, each the other's control: GRPO that teaches two-digit
 * products to call the calculator loses the one-digit products the start answered from memory
 * (no tool offered); with the ptx term they hold at update 25. Each run is made once
 * (preset-forgetting, preset-forgetting-ptx) and judged by both checks, and by the trained task's own gain.
 */
export const FORGETTING_LESSON = {
  retained: 'retained/success_rate',
  trained: 'reward/strict_accuracy',
  forgets: () => presetCheck('grpo-calc-forgetting'),
  holds: () => presetCheck('grpo-calc-ptx'),
};
