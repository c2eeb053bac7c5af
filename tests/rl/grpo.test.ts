/**
 * GRPO on the CPU backend: a tiny-budget smoke run, run control (live changes as events, bad
 * values refused), determinism, and a learning test from a briefly warmed-up policy.
 */
import { describe, expect, it } from 'vitest';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { evaluateTask } from '../../src/rl/evaluate';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/grpo-config';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';
import { OpInputError } from '../../src/ops/errors';

const tokenizer = CharTokenizer.createDefault();
const task = reverseTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: task.maxChars + 2,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: false,
};
const small: GrpoConfig = {
  ...DEFAULT_GRPO_CONFIG,
  groupSize: 4,
  promptsPerUpdate: 4,
  maxNewTokens: 5,
  lr: 3e-3,
};

function trainer(seed: number, cfg: GrpoConfig = small, params?: Float32Array) {
  const start = params ?? transformerLayout(config).initialize<Float32Array>(seed);
  const policy = new CpuLanguageModel(config, start);
  const reference = new CpuLanguageModel(config, start);
  return createGrpoTrainer({ policy, reference, tokenizer, task, seed }, cfg);
}

describe('GRPO (CPU)', () => {
  it('runs updates with finite, namespaced metrics', async () => {
    const t = trainer(1, { ...small, klCoef: 0.05, entropyCoef: 0.01, iterations: 2 });
    for (let i = 0; i < 2; i++) {
      const m = await t.update();
      for (const key of [
        'reward/mean',
        'frac_reward_zero_std',
        'response_length/mean',
        'actor/pg_loss',
        'actor/pg_clipfrac',
        'actor/ppo_kl',
        'actor/entropy',
        'actor/kl_loss',
        'actor/grad_norm',
      ]) {
        expect(Number.isFinite(m[key]), key).toBe(true);
      }
      expect(m['response_length/mean']).toBeGreaterThan(0);
      expect(m['actor/entropy']).toBeGreaterThan(0);
    }
    expect(t.step).toBe(2);
    expect(t.lastSamples).toHaveLength(16);
    expect(t.health.healthy).toBe(true);
  });

  it('applies a live change at the next update and records it there', async () => {
    const t = trainer(2);
    await t.update();
    t.setHyperparams({ lr: 1e-4, clipHigh: 0.28 });
    expect(t.config.lr).toBe(3e-3); // not yet
    const m = await t.update();
    expect(m['actor/lr']).toBe(1e-4);
    expect(t.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { lr: 1e-4, clipHigh: 0.28 } },
    ]);
  });

  it('refuses bad values and settings that cannot change while running, naming them', () => {
    const t = trainer(3);
    expect(() => t.setHyperparams({ lr: -1 })).toThrow(OpInputError);
    expect(() => t.setHyperparams({ lr: -1 })).toThrow(/lr.*\(0, 1\]/);
    expect(() => t.setHyperparams({ groupSize: 8 })).toThrow(/groupSize.*cannot change/);
    expect(() => t.setHyperparams({ dualClip: 0.5 })).toThrow(/dualClip.*> 1/);
    expect(() => trainer(3, { ...small, groupSize: 1 })).toThrow(/groupSize.*\[2, 64\]/);
    expect(t.config.lr).toBe(3e-3);
  });

  it("refuses settings named after Object.prototype's members, at creation and live", () => {
    // Such names must not find Object.prototype's functions in the config spec.
    for (const name of ['constructor', 'toString', 'hasOwnProperty']) {
      const bad = { ...small, [name]: 1 } as GrpoConfig;
      expect(() => trainer(3, bad)).toThrow(new RegExp(`${name} is not a setting of grpo`));
      const t = trainer(3);
      expect(() => t.setHyperparams({ [name]: 1 } as Partial<GrpoConfig>)).toThrow(
        new RegExp(`${name} is not a setting of grpo`),
      );
    }
  });

  it('skips an update whose reward is not finite, naming the term and the row', async () => {
    // A reward model that answers NaN for one row (and +Infinity for another, later).
    const start = transformerLayout(config).initialize<Float32Array>(5);
    const policy = new CpuLanguageModel(config, start);
    const scores = [NaN, Infinity];
    let call = 0;
    const rewardModel = {
      async score(rows: readonly unknown[]) {
        const out = new Float32Array(rows.length).fill(0.5);
        out[5] = scores[call++ % scores.length]!;
        return out;
      },
    };
    const t = createGrpoTrainer(
      { policy, tokenizer, task, seed: 5, rewardModel },
      { ...small, rewardModelWeight: 1 },
    );
    const metrics = await t.update();
    expect(t.step).toBe(1);
    expect(t.events).toEqual([
      {
        step: 1,
        kind: 'skipped-update',
        reason: "non-finite reward: the 'model' term of row 5 is NaN; update skipped",
      },
    ]);
    // Nothing was trained on: the weights are the starting ones, every one finite.
    expect(await policy.readParams()).toEqual(start);
    expect(Number.isNaN(metrics['reward/mean'])).toBe(true);
    await t.update();
    expect(t.events[1]).toEqual({
      step: 2,
      kind: 'skipped-update',
      reason: "non-finite reward: the 'model' term of row 5 is Infinity; update skipped",
    });
  });

  it('is deterministic for a seed', async () => {
    // Everything but wall-clock throughput.
    const strip = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'perf/tokens_per_s'));
    const [a, b] = [trainer(4), trainer(4)];
    for (let i = 0; i < 2; i++) expect(strip(await a.update())).toEqual(strip(await b.update()));
  });

  it('raises the success rate of a briefly warmed-up policy', { timeout: 120_000 }, async () => {
    const warm = new CpuLanguageModel(
      config,
      transformerLayout(config).initialize<Float32Array>(5),
    );
    await runSft(warm, tokenizer, task, {
      ...DEFAULT_SFT_CONFIG,
      steps: 200,
      batchSize: 16,
      evalSamples: 16,
      seed: 6,
    });
    const params = await warm.readParams();
    const before = await evaluateTask(warm, tokenizer, task, { seed: 9, samples: 96 });
    const t = trainer(7, { ...small, groupSize: 8, promptsPerUpdate: 8, lr: 1e-3 }, params);
    const rewards: number[] = [];
    for (let i = 0; i < 30; i++) rewards.push((await t.update())['reward/mean']!);
    const early = rewards.slice(0, 5).reduce((s, r) => s + r, 0) / 5;
    const late = rewards.slice(-5).reduce((s, r) => s + r, 0) / 5;
    console.log(
      `grpo: success before ${before.successRate}, reward ${early.toFixed(3)} → ${late.toFixed(3)}`,
    );
    expect(before.successRate).toBeLessThan(0.9); // room to improve
    expect(late).toBeGreaterThan(early + 0.1);
  });

  it.each(['rloo', 'reinforce++', 'reinforce++-baseline'] as const)(
    'runs with the %s advantage estimator',
    async (advantageEstimator) => {
      const t = trainer(8, { ...small, advantageEstimator });
      const m = await t.update();
      expect(Number.isFinite(m['actor/pg_loss'])).toBe(true);
      expect(Number.isFinite(m['actor/grad_norm'])).toBe(true);
    },
  );

  it('puts the KL into the reward when asked, and reports it', async () => {
    // Untrained, every reward is 0: the entropy bonus is what moves the policy off the reference.
    const t = trainer(9, { ...small, klCoef: 0.1, klPenalty: 'reward', entropyCoef: 0.1 });
    await t.update();
    const m = await t.update(); // the policy has moved: the KL is no longer 0
    expect(m['actor/reward_kl_penalty']).toBeGreaterThan(0);
    expect(m['actor/kl_loss']).toBe(0);
  });

  it(
    'dynamic sampling keeps only groups whose rewards differ, sampling more rounds for them',
    { timeout: 60_000 },
    async () => {
      const warm = new CpuLanguageModel(
        config,
        transformerLayout(config).initialize<Float32Array>(5),
      );
      await runSft(warm, tokenizer, task, {
        ...DEFAULT_SFT_CONFIG,
        steps: 60,
        batchSize: 16,
        evalSamples: 8,
        seed: 6,
      });
      const params = await warm.readParams();
      const t = trainer(10, { ...small, dynamicSampling: true, maxGenerationRounds: 6 }, params);
      const m = await t.update();
      expect(m['frac_reward_zero_std']).toBeGreaterThan(0); // some groups were dropped …
      expect(m['dynamic_sampling/rounds']).toBeGreaterThan(1); // … so more rounds were sampled
      const groups = Array.from({ length: 4 }, (_, g) => t.lastSamples.slice(g * 4, g * 4 + 4));
      const informative = groups.filter((g) => new Set(g.map((s) => s.reward)).size > 1).length;
      expect(m['batch/frac_reward_zero_std']).toBeCloseTo(1 - informative / 4, 6);
      if (m['dynamic_sampling/rounds']! < 6) expect(informative).toBe(4);
    },
  );
});
