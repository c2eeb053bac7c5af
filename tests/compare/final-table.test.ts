import { describe, expect, it } from 'vitest';
import { configDiff, finalTable, finalValue } from '../../src/compare/final-table';
import { catalog, defaultsOf, makeRun } from './fixtures';

describe('finalValue', () => {
  it('is the mean of the last k finite values', () => {
    expect(finalValue([1, 2, 3, 4, 5], 2)).toEqual({ value: 4.5, count: 2 });
    // The last two finite values are 3 and 1: (3 + 1) / 2 = 2.
    expect(finalValue([1, NaN, 3, NaN], 2)).toEqual({ value: 2, count: 2 });
    // Default k = 10 over 1 … 12: mean of 3 … 12 = 7.5.
    expect(finalValue(Array.from({ length: 12 }, (_, i) => i + 1))).toEqual({
      value: 7.5,
      count: 10,
    });
    // Fewer than k values: all of them.
    expect(finalValue([4, 8], 10)).toEqual({ value: 6, count: 2 });
  });

  it('is NaN with count 0 for a metric never reported, and refuses a bad k', () => {
    expect(finalValue([NaN, NaN])).toEqual({ value: NaN, count: 0 });
    expect(() => finalValue([1], 0)).toThrow('k must be an integer ≥ 1, got 0');
  });

  it('finalTable gives one row per run, missing metrics as NaN', () => {
    const a = makeRun({ algorithm: 'grpo', metrics: { r: [1, 3] } });
    const b = makeRun({ algorithm: 'grpo', metrics: {} });
    expect(finalTable([a, b], ['r'], 2)).toEqual([
      { r: { value: 2, count: 2 } },
      { r: { value: NaN, count: 0 } },
    ]);
  });
});

describe('configDiff', () => {
  it('lists the differing keys in the spec order', () => {
    const a = makeRun({ algorithm: 'grpo' });
    const b = makeRun({
      algorithm: 'grpo',
      config: { ...defaultsOf('grpo'), lr: 0.01, groupSize: 4 },
    });
    expect(configDiff([a, b], catalog)).toEqual(['groupSize', 'lr']);
    expect(configDiff([a, a], catalog)).toEqual([]);
  });

  it('GRPO against PPO: keys one lacks differ; first spec first, then the other', () => {
    // Worked out from the two default configs (src/rl/grpo.ts, src/rl/ppo-lm.ts): shared keys with
    // equal defaults (maxNewTokens 8, temperature 1, lr 1e-3, weightDecay 0, maxGradNorm 1,
    // clipLow/High 0.2, lossAggregation, klCoef 0, entropyCoef 0) drop out; promptsPerUpdate
    // (8 vs 32) and klEstimator (k3 vs k1) stay.
    const grpo = makeRun({ algorithm: 'grpo' });
    const ppo = makeRun({ algorithm: 'ppo' });
    expect(configDiff([grpo, ppo], catalog)).toEqual([
      'advantageEstimator',
      'groupSize',
      'promptsPerUpdate',
      'topK',
      'topP',
      'dualClip',
      'stdNormalization',
      'klEstimator',
      'klPenalty',
      'iterations',
      'dynamicSampling',
      'maxGenerationRounds',
      'maskTruncated',
      'gamma',
      'lambda',
      'cliprangeValue',
      'vfCoef',
      'epochs',
      'minibatches',
      'whitenAdvantages',
      'gaeMaskMode',
      'targetKl',
    ]);
  });
});
