/**
 * The reward-hacking lesson's presets (see REWARD_HACKING_LESSON).
 * One gamed run serves as the gamed widget's run and as the shaped widget's control.
 */
import { describe, expect, it } from 'vitest';
import {
  firstPass,
  passedAndAtLeast,
  presetSeries,
  REWARD_HACKING_LESSON as L,
  updatesToCheck,
} from './lm-presets';
import { presetBudget } from '../../src/lessons/presets';

describe('the reward-hacking lesson on CPU', () => {
  it('the gameable reward drives answers to the token limit; lr 1e-9 and overlong shaping do not', async () => {
    const gamed = L.gamed();
    const clipped = (
      await presetSeries(
        'grpo-copy-gamed',
        [L.clipped],
        presetBudget('grpo-copy-gamed'),
        {},
        passedAndAtLeast(gamed, L.clipped, 25),
      )
    )[L.clipped]!;
    const passed = firstPass(gamed, clipped);
    console.log(`grpo-copy-gamed: ${gamed.text} at update ${passed}`);
    expect(passed).toBeLessThanOrEqual(presetBudget('grpo-copy-gamed'));
    // The shaped widget's control: the same run with the shaping off is this run, judged from
    // update 25 on.
    expect(clipped.length).toBeGreaterThanOrEqual(25);
    expect(firstPass(L.capped(), clipped)).toBe(Infinity);
    expect(await updatesToCheck('grpo-copy-gamed', gamed.text, passed, { lr: 1e-9 })).toBe(
      Infinity,
    );
    // Judged from update 25 on: the shaped run passes there or within its budget of 30.
    const budget = presetBudget('grpo-copy-counterweight');
    expect(
      await updatesToCheck('grpo-copy-counterweight', L.capped().text, budget),
    ).toBeLessThanOrEqual(budget);
  }, 600_000);
});
