/**
 * The learning lessons' claims, checked the way the lessons make them: each preset on seeds 1–3
 * reaches its widget's gain check within its budget, and its matched control (the preset's
 * `control`: the same seed and prompts with lr 1e-9 or the mechanism off) has not reached it by
 * the update the preset did on that seed. bench:learn runs 5 seeds with every control (a
 * preset's second control, `alsoControl`, too) to the full budget; these are the essential checks
 * CI can afford. One preset and seed per test file, so the CPU layer's workers share them evenly (scripts/heavy-first-sequencer.ts starts them first).
 */
import { expect, it } from 'vitest';
import { presetEffect, widgetCheck } from '../../bench/learn/lesson-effects';
import { presetBudget, PRESETS, type PresetName } from '../../src/lessons/presets';

export const LEARNING_SEEDS = [1, 2, 3] as const;

export function learningTest(name: PresetName, seed: (typeof LEARNING_SEEDS)[number]): void {
  const preset = PRESETS[name];
  const check = widgetCheck(name);
  it(
    `${name}: ${check.text} on seed ${seed} within ${presetBudget(name)} updates; ` +
      `not with ${'control' in preset ? preset.control.what : '(no control)'}`,
    async () => {
      const row = await presetEffect('', name, check, {
        seeds: [seed],
        backend: 'cpu',
        controlRuns: 'to-pass',
        // The second control (the tool preset's lr 1e-9) runs in bench:learn only (see there).
        alsoControl: false,
        log: console.log,
      });
      expect(row.runs[0]!.passedAt).not.toBeNull();
      expect(row.controls[0]!.passedAt).toBeNull();
    },
    900_000,
  );
}
