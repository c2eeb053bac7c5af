/**
 * Language-model lesson presets, run as the lab runs them, each to its check — and a control that
 * must not reach the check by the update the preset did, on the preset's own seed (1). The claims
 * over seeds 1–5 are `npm run bench:learn -- --only=lessons`'s. Shared by lm-presets-a … j.test.ts,
 * split so that the test workers share them evenly.
 */
import { describe, expect, it } from 'vitest';
import { widgetCheck } from '../../bench/learn/lesson-effects';
import { runPreset } from '../../bench/learn/preset-run';
import { metricCheckPassed } from '../../src/lessons/checks';
import type { PresetName } from '../../src/lessons/presets';
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

/** One row: the preset, its check, its budget, and the control's change (null: none). */
export type PresetRow = [PresetName, string, number, Settings | null];

/** The preset passes within its budget; the control has not passed by the update it did. */
export function presetTests(rows: PresetRow[]): void {
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

/**
 * The learned-reward-model lesson's two widgets, each the other's control: against the reward
 * model alone strict accuracy falls by 0.3 or more; with the KL penalty it has not fallen by 0.1
 * at update 20 (on seed 1 the two runs are 0.52 apart there). Each run is made once (lm-presets-f, lm-presets-g) and judged by both checks.
 */
export const REWARD_MODEL_LESSON = {
  strict: 'reward/strict_accuracy',
  model: 'reward/model',
  collapse: () => widgetCheck('grpo-copy-rm', 'reward/strict_accuracy gain<=-0.3'),
  holds: () => widgetCheck('grpo-copy-rm-kl', 'reward/strict_accuracy gain>=-0.1 after 20'),
};

/**
 * The reward-hacking lesson's two widgets: under the gameable reward the share of answers cut at
 * the token limit rises by 0.8; with overlong shaping it has not risen by 0.05 at update 25. The
 * shaped run's control (shaping off) is the gamed run itself, so one run serves both checks
 * (lm-presets-c).
 */
export const REWARD_HACKING_LESSON = {
  clipped: 'response_length/clip_ratio',
  gamed: () => widgetCheck('grpo-copy-gamed', 'response_length/clip_ratio gain>=0.8'),
  capped: () =>
    widgetCheck('grpo-copy-counterweight', 'response_length/clip_ratio gain<=0.05 after 25'),
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
 * (lm-presets-i, lm-presets-j) and judged by both checks, and by the trained task's own gain.
 */
export const FORGETTING_LESSON = {
  retained: 'retained/success_rate',
  trained: 'reward/strict_accuracy',
  forgets: () => widgetCheck('grpo-calc-forgetting', 'retained/success_rate gain<=-0.3'),
  holds: () => widgetCheck('grpo-calc-ptx', 'retained/success_rate gain>=-0.1 after 25'),
};
