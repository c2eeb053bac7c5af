/** The reward-model lesson: GRPO against the learned reward model alone (see REWARD_MODEL_LESSON). */
import { describe, expect, it } from 'vitest';
import {
  firstPass,
  passedAndAtLeast,
  presetSeries,
  REWARD_MODEL_LESSON as L,
  updatesToCheck,
} from './lm-presets';
import { presetBudget } from '../../src/lessons/presets';

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('the learned reward model lesson on CPU', () => {
  it('against the reward model alone, its score rises while strict accuracy falls; not at lr 1e-9', async () => {
    const collapse = L.collapse();
    // Through update 20 at least: the KL widget's control (klCoef 0) is this run, judged there.
    const series = await presetSeries(
      'grpo-copy-rm',
      [L.strict, L.model],
      presetBudget('grpo-copy-rm'),
      {},
      passedAndAtLeast(collapse, L.strict, 20),
    );
    const strict = series[L.strict]!;
    const model = series[L.model]!;
    const passed = firstPass(collapse, strict);
    console.log(`grpo-copy-rm: ${collapse.text} at update ${passed}`);
    expect(passed).toBeLessThanOrEqual(presetBudget('grpo-copy-rm'));
    expect(strict.length).toBeGreaterThanOrEqual(20);
    expect(firstPass(L.holds(), strict)).toBe(Infinity);
    // The proxy went up while the truth went down: over-optimization, not a policy that broke.
    expect(mean(model.slice(-10))).toBeGreaterThan(mean(model.slice(0, 5)) + 0.2);
    expect(await updatesToCheck('grpo-copy-rm', collapse.text, passed, { lr: 1e-9 })).toBe(
      Infinity,
    );
  }, 600_000);
});
