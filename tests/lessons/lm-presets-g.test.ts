/** Language-model lesson presets, part g: the reward model with a KL penalty (see part f). */
import { describe, expect, it } from 'vitest';
import { firstPass, presetSeries, REWARD_MODEL_LESSON as L } from './lm-presets';

describe('the learned reward model lesson on CPU', () => {
  it('with the KL penalty, strict accuracy has not fallen at update 20', async () => {
    const strict = (await presetSeries('grpo-copy-rm-kl', [L.strict], 20))[L.strict]!;
    console.log(`grpo-copy-rm-kl: hold check passed at update ${firstPass(L.holds(), strict)}`);
    expect(firstPass(L.holds(), strict)).toBe(20);
    expect(firstPass(L.collapse(), strict)).toBe(Infinity);
  }, 600_000);
});
