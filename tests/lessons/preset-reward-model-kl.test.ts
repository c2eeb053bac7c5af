/** The reward-model lesson: the same run held by a KL penalty (see preset-reward-model.test.ts). */
import { describe, expect, it } from 'vitest';
import { presetBudget } from '../../src/lessons/presets';
import { firstPass, presetSeries, REWARD_MODEL_LESSON as L } from './lm-presets';

describe('the learned reward model lesson on CPU', () => {
  it('with the KL penalty, strict accuracy has not fallen at update 20', async () => {
    const strict = (
      await presetSeries('grpo-copy-rm-kl', [L.strict], presetBudget('grpo-copy-rm-kl'))
    )[L.strict]!;
    console.log(`grpo-copy-rm-kl: hold check passed at update ${firstPass(L.holds(), strict)}`);
    // An 'after 20' check within a budget of 20: it passes at the last update, not before.
    expect(firstPass(L.holds(), strict)).toBe(presetBudget('grpo-copy-rm-kl'));
    expect(firstPass(L.collapse(), strict)).toBe(Infinity);
  }, 600_000);
});
