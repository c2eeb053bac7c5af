/**
 * Language-model lesson presets, part c: the reward-hacking lesson (see REWARD_HACKING_LESSON).
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

describe('the reward-hacking lesson on CPU', () => {
  it('the gameable reward drives answers to the token limit; lr 1e-9 and overlong shaping do not', async () => {
    const gamed = L.gamed();
    const clipped = (
      await presetSeries(
        'grpo-copy-gamed',
        [L.clipped],
        30,
        {},
        passedAndAtLeast(gamed, L.clipped, 25),
      )
    )[L.clipped]!;
    const passed = firstPass(gamed, clipped);
    console.log(`grpo-copy-gamed: ${gamed.text} at update ${passed}`);
    expect(passed).toBeLessThanOrEqual(30);
    // The shaped widget's control: the same run with the shaping off is this run, judged from
    // update 25 on.
    expect(clipped.length).toBeGreaterThanOrEqual(25);
    expect(firstPass(L.capped(), clipped)).toBe(Infinity);
    expect(await updatesToCheck('grpo-copy-gamed', gamed.text, passed, { lr: 1e-9 })).toBe(
      Infinity,
    );
    // Judged from update 25 on: the shaped run passes there or within its budget of 30.
    expect(
      await updatesToCheck('grpo-copy-counterweight', L.capped().text, 30),
    ).toBeLessThanOrEqual(30);
  }, 600_000);
});
