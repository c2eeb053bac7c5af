/** Language-model lesson presets, part f: the reward model alone (see REWARD_MODEL_LESSON). */
import { describe, expect, it } from 'vitest';
import { firstPass, presetSeries, REWARD_MODEL_LESSON as L } from './lm-presets';

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('the learned reward model lesson on CPU', () => {
  it('against the reward model alone, its score rises while strict accuracy collapses', async () => {
    const series = await presetSeries('grpo-copy-rm', [L.strict, L.model], 30);
    const strict = series[L.strict]!;
    const model = series[L.model]!;
    console.log(`grpo-copy-rm: collapse check passed at update ${firstPass(L.collapse(), strict)}`);
    expect(firstPass(L.collapse(), strict)).toBeLessThanOrEqual(30);
    expect(firstPass(L.holds(), strict)).toBe(Infinity);
    // The proxy went up while the truth went down: over-optimization, not a policy that broke.
    expect(mean(model.slice(-10))).toBeGreaterThan(mean(model.slice(0, 10)) + 0.3);
  }, 600_000);
});
