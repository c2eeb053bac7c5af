import { describe, expect, it } from 'vitest';
import { GRPO_CONFIG_SPEC } from '../../src/rl/grpo-config';
import { PPO_CONFIG_SPEC } from '../../src/rl/ppo-config';
import { TD_CONTROL_CONFIG_SPEC } from '../../src/rl/td-control';
import { arrangeSettings, KEY_SETTINGS } from '../../src/state/setting-order';

describe('arrangeSettings', () => {
  it("puts GRPO's learning rate, prompts, group size, clip, KL and temperature first", () => {
    const names = Object.keys(GRPO_CONFIG_SPEC);
    const { key, advanced } = arrangeSettings(names);
    expect(key).toEqual([
      'lr',
      'promptsPerUpdate',
      'groupSize',
      'clipLow',
      'clipHigh',
      'klCoef',
      'temperature',
    ]);
    // Nothing is lost or repeated: the rest keep the spec's order.
    expect([...key, ...advanced].sort()).toEqual([...names].sort());
    expect(advanced).toEqual(names.filter((n) => !key.includes(n)));
  });

  it.each([
    [Object.keys(PPO_CONFIG_SPEC), ['learningRate', 'clipCoef']],
    [Object.keys(TD_CONTROL_CONFIG_SPEC), ['alpha', 'epsilon']],
  ])('names only the key settings a spec has (%#)', (names, expected) => {
    expect(arrangeSettings(names).key).toEqual(expected);
  });

  it.each([
    ['kl', ['klCoef'], ['klEstimator', 'klPenalty']],
    ['  CLIP ', ['clipLow', 'clipHigh'], ['dualClip']],
    ['grad', [], ['maxGradNorm']],
    ['no such setting', [], []],
  ])('filters by name: %j', (filter, key, advanced) => {
    expect(arrangeSettings(Object.keys(GRPO_CONFIG_SPEC), filter)).toEqual({ key, advanced });
  });

  it('declares each key setting once', () => {
    expect(new Set(KEY_SETTINGS).size).toBe(KEY_SETTINGS.length);
  });
});
