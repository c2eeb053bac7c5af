/**
 * The learning lessons' claims, checked the way the lessons make them: each preset on seeds 1–3
 * reaches its widget's gain check within its budget, and its matched control (the preset's
 * `control`: the same seed and prompts with lr 1e-9 or the mechanism off) has not reached it by
 * the update the preset did on that seed. bench:learn runs 5 seeds with every control to the full
 * budget; these are the essential checks CI can afford. One preset and seed per test file, so
 * the CPU layer's workers share them evenly (scripts/heavy-first-sequencer.ts starts them first).
 */
import { expect, it } from 'vitest';
import { presetEffect } from '../../bench/learn/lesson-effects';
import type { MetricCheck } from '../../src/lessons/seed-summary';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks, lessonWidgets } from '../../src/lessons/lesson';
import { PRESETS, type PresetName } from '../../src/lessons/presets';

export const LEARNING_SEEDS = [1, 2, 3] as const;

/** The first metric check the lessons hold `name` to: a widget's, or a seeds block's. */
function widgetCheck(name: PresetName): MetricCheck {
  const widget = LESSONS.flatMap((l) => lessonWidgets(lessonBlocks(l))).find(
    (b) => b.preset === name && b.check.kind === 'metric',
  );
  if (!widget) throw new Error(`no widget or seeds block runs ${name} with a metric check`);
  return widget.check as MetricCheck;
}

export function learningTest(name: PresetName, seed: (typeof LEARNING_SEEDS)[number]): void {
  const preset = PRESETS[name];
  const check = widgetCheck(name);
  it(
    `${name}: ${check.text} on seed ${seed} within ${'budget' in preset ? preset.budget : 30} updates; ` +
      `not with ${'control' in preset ? preset.control.what : '(no control)'}`,
    async () => {
      const row = await presetEffect('', name, check, {
        seeds: [seed],
        backend: 'cpu',
        controlRuns: 'to-pass',
        log: console.log,
      });
      expect(row.runs[0]!.passedAt).not.toBeNull();
      expect(row.controls[0]!.passedAt).toBeNull();
    },
    900_000,
  );
}
