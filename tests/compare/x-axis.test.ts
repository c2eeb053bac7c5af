import { describe, expect, it } from 'vitest';
import { X_AXES, xValues, type XValues } from '../../src/compare/x-axis';
import { makeRun } from './fixtures';

function values(result: XValues): number[] {
  if (!result.ok) throw new Error(`unavailable: ${result.reason}`);
  return result.values;
}

function reason(result: XValues): string {
  if (result.ok) throw new Error('expected the axis to be unavailable');
  return result.reason;
}

describe('xValues', () => {
  it('lists the four axes', () => {
    expect(X_AXES).toEqual(['update', 'env_steps', 'tokens', 'wall_time']);
  });

  it('update: 1 … n, n = the longest series', () => {
    const run = makeRun({ algorithm: 'sarsa', task: 'cliffwalking', metrics: { a: [1, 2, 3] } });
    expect(values(xValues(run, 'update'))).toEqual([1, 2, 3]);
  });

  it('env_steps: charts/env_steps as logged, gaps kept as NaN', () => {
    const run = makeRun({
      algorithm: 'ppo-mlp',
      task: 'cartpole',
      metrics: { 'charts/env_steps': [512, NaN, 1536] },
    });
    expect(values(xValues(run, 'env_steps'))).toEqual([512, NaN, 1536]);
  });

  it('env_steps for Q-learning: Σ episode lengths, unknown after the first gap', () => {
    // 5, 5 + 3 = 8, then update 3 has no length: 8 + ? is unknown, and so is everything after.
    const run = makeRun({
      algorithm: 'q-learning',
      task: 'cliffwalking',
      metrics: { 'charts/episodic_length': [5, 3, NaN, 2] },
    });
    const result = xValues(run, 'env_steps');
    expect(values(result)).toEqual([5, 8, NaN, NaN]);
    expect(result.ok && result.note).toBe(
      'unknown from update 3 on: that update has no known episode length',
    );
  });

  it('tokens for GRPO: Σ response_length/mean × prompts × group size, live changes included', () => {
    // promptsPerUpdate 2 × groupSize 4 = 8 completions; from update 3 promptsPerUpdate = 1 → 4.
    // Per update: 3·8 = 24, 5·8 = 40, 4·4 = 16 → running totals 24, 64, 80.
    const run = makeRun({
      algorithm: 'grpo',
      config: { promptsPerUpdate: 2, groupSize: 4 },
      metrics: { 'response_length/mean': [3, 5, 4] },
      events: [{ step: 3, kind: 'hyperparams', changes: { promptsPerUpdate: 1 } }],
    });
    const result = xValues(run, 'tokens');
    expect(values(result)).toEqual([24, 64, 80]);
    expect(result.ok && result.source).toBe(
      'Σ response_length/mean × promptsPerUpdate × groupSize',
    );
  });

  it('tokens for PPO and DPO use their own completion counts', () => {
    // PPO: 32 prompts, one completion each: 2·32 = 64. DPO: 4 prompts × 2 samples = 8: 3·8 = 24.
    const ppo = makeRun({
      algorithm: 'ppo',
      config: { promptsPerUpdate: 32 },
      metrics: { 'response_length/mean': [2] },
    });
    const dpo = makeRun({
      algorithm: 'dpo',
      config: { promptsPerUpdate: 4, samplesPerPrompt: 2 },
      metrics: { 'response_length/mean': [3] },
    });
    expect(values(xValues(ppo, 'tokens'))).toEqual([64]);
    expect(values(xValues(dpo, 'tokens'))).toEqual([24]);
  });

  it('tokens: a logged perf/generated_tokens wins over the derivation', () => {
    const run = makeRun({
      algorithm: 'grpo',
      metrics: { 'perf/generated_tokens': [10, 20], 'response_length/mean': [1, 1] },
    });
    expect(values(xValues(run, 'tokens'))).toEqual([10, 30]);
  });

  it('tokens: says so when dynamic sampling generated groups it cannot count', () => {
    const run = makeRun({
      algorithm: 'grpo',
      config: { promptsPerUpdate: 1, groupSize: 2 },
      metrics: { 'response_length/mean': [1, 1], 'dynamic_sampling/rounds': [1, 3] },
    });
    const result = xValues(run, 'tokens');
    expect(values(result)).toEqual([2, 4]);
    expect(result.ok && result.note).toContain(
      'from update 2 dynamic sampling generated extra rounds',
    );
  });

  it('wall_time for language models: Σ tokens / perf/tokens_per_s', () => {
    // 8 completions: 24, 40, 16 tokens at 12, 20, 8 tokens/s → 2 s each → 2, 4, 6.
    const run = makeRun({
      algorithm: 'grpo',
      config: { promptsPerUpdate: 2, groupSize: 4 },
      metrics: { 'response_length/mean': [3, 5, 2], 'perf/tokens_per_s': [12, 20, 8] },
    });
    expect(values(xValues(run, 'wall_time'))).toEqual([2, 4, 6]);
  });

  it('wall_time: a logged timing_s/step wins', () => {
    const run = makeRun({
      algorithm: 'q-learning',
      task: 'cliffwalking',
      metrics: { 'timing_s/step': [0.5, 0.25] },
    });
    expect(values(xValues(run, 'wall_time'))).toEqual([0.5, 0.75]);
  });

  it('wall_time for PPO-MLP: env steps / SPS, marked approximate', () => {
    // 512 / 256 = 2 s, 1024 / 512 = 2 s (cumulative quantities: no running sum).
    const run = makeRun({
      algorithm: 'ppo-mlp',
      task: 'cartpole',
      metrics: { 'charts/env_steps': [512, 1024], 'charts/SPS': [256, 512] },
    });
    const result = xValues(run, 'wall_time');
    expect(values(result)).toEqual([2, 2]);
    expect(result.ok && result.note).toContain('approximate');
  });

  it.each([
    ['value-iteration', 'gridworld', 'env_steps', 'plans over the known model'],
    ['grpo', 'reverse', 'env_steps', 'use sampled tokens'],
    ['q-learning', 'cliffwalking', 'tokens', 'not a language-model algorithm'],
    ['q-learning', 'cliffwalking', 'wall_time', 'would need to log timing_s/step'],
    ['grpo', 'reverse', 'tokens', 'did not log response_length/mean'],
  ] as const)('%s on %s: %s is unavailable (%s)', (algorithm, task, axis, why) => {
    const run = makeRun({ algorithm, task, metrics: { x: [1] } });
    expect(reason(xValues(run, axis))).toContain(why);
  });

  it('a cumulative axis whose first amount is unknown is unavailable', () => {
    const run = makeRun({
      algorithm: 'sarsa',
      task: 'cliffwalking',
      metrics: { 'charts/episodic_length': [NaN, 4] },
    });
    expect(reason(xValues(run, 'env_steps'))).toBe(
      'update 1 has no known episode length (Σ charts/episodic_length)',
    );
  });
});
