/**
 * DPO on the CPU backend: metrics of a few updates, the sequence log-probs behind its rewards
 * recomputed independently, skipped updates without pairs, run control (live changes as events,
 * bad values refused), determinism, and a learning test from a briefly warmed-up policy.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { createDpoTrainer, DEFAULT_DPO_CONFIG, type DpoConfig } from '../../src/rl/dpo';
import { evaluateTask } from '../../src/rl/evaluate';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';

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
const small: DpoConfig = {
  ...DEFAULT_DPO_CONFIG,
  promptsPerUpdate: 4,
  samplesPerPrompt: 4,
  maxNewTokens: 5,
  lr: 3e-3,
};

/** Weights after a short SFT warm-up: the policy succeeds sometimes, so pairs form. */
let warmParams: Float32Array;
let warmSuccess: number;

beforeAll(async () => {
  const warm = new CpuLanguageModel(config, transformerLayout(config).initialize<Float32Array>(5));
  await runSft(warm, tokenizer, task, {
    ...DEFAULT_SFT_CONFIG,
    steps: 200,
    batchSize: 16,
    evalSamples: 16,
    seed: 6,
  });
  warmParams = await warm.readParams();
  warmSuccess = (await evaluateTask(warm, tokenizer, task, { seed: 9, samples: 96 })).successRate;
}, 60_000);

function trainer(seed: number, cfg: DpoConfig = small, params: Float32Array = warmParams) {
  const policy = new CpuLanguageModel(config, params);
  const reference = new CpuLanguageModel(config, params);
  return {
    policy,
    reference,
    t: createDpoTrainer({ policy, reference, tokenizer, task, seed }, cfg),
  };
}

/** Σ log π(completion + <eos> | <bos> prompt) under `model`, scored on its own (no padding). */
async function sequenceLogp(model: CpuLanguageModel, prompt: string, completion: string) {
  const ids = [tokenizer.bos, ...tokenizer.encode(prompt + completion), tokenizer.eos];
  const T = ids.length - 1;
  const { logp } = await model.scoreTokens(
    Int32Array.from(ids.slice(0, T)),
    Int32Array.from(ids.slice(1)),
    1,
    T,
    1,
  );
  let sum = 0;
  for (let t = prompt.length; t < T; t++) sum += logp[t]!; // targets from the completion on
  return sum;
}

describe('DPO (CPU)', () => {
  it('runs updates with finite, namespaced metrics', async () => {
    const { t } = trainer(1, { ...small, promptsPerUpdate: 6, labelSmoothing: 0.1 });
    for (let i = 0; i < 2; i++) {
      const m = await t.update();
      expect(m.pairs).toBeGreaterThan(0);
      for (const key of [
        'reward/mean',
        'reward/success_rate',
        'response_length/mean',
        'loss',
        'rewards/chosen',
        'rewards/rejected',
        'rewards/accuracies',
        'rewards/margins',
        'logps/chosen',
        'logps/rejected',
        'actor/grad_norm',
      ]) {
        expect(Number.isFinite(m[key]), key).toBe(true);
      }
      expect(m['logps/chosen']).toBeLessThan(0);
      if (i === 0) {
        // Policy = reference before the first step: every implicit reward is 0, ties are not
        // wins, and the loss is −0.9·log σ(0) − 0.1·log σ(0) = ln 2.
        expect(m['rewards/chosen']).toBe(0);
        expect(m['rewards/accuracies']).toBe(0);
        expect(m.loss).toBeCloseTo(Math.LN2, 9);
      }
      expect(t.lastPairs).toHaveLength(m.pairs!);
      for (const pair of t.lastPairs) {
        expect(
          task.verify({ prompt: pair.prompt, answer: reverse(pair.prompt) }, pair.chosen),
        ).toBe(1);
        expect(pair.rejected).not.toBe(reverse(pair.prompt));
      }
    }
    expect(t.step).toBe(2);
    expect(t.events).toEqual([]);
  });

  it('reports rewards that match sequence log-probs recomputed on their own', async () => {
    const { policy, reference, t } = trainer(2);
    await t.update(); // policy moves away from the reference
    const before = new CpuLanguageModel(config, await policy.readParams());
    const m = await t.update();
    expect(m.pairs).toBeGreaterThan(0);
    // rewards/chosen = β·(Σ log π − Σ log π_ref) over the completion and <eos>, before this step.
    for (const pair of t.lastPairs.slice(0, 3)) {
      const chosen =
        (await sequenceLogp(before, pair.prompt, pair.chosen)) -
        (await sequenceLogp(reference, pair.prompt, pair.chosen));
      expect(pair.rewardChosen).toBeCloseTo(small.beta * chosen, 4);
      expect(pair.rewardChosen).not.toBe(0);
    }
  });

  it('skips updates that form no pair, and says so', async () => {
    // A fresh transformer never reverses a string: every sample fails, so no pair forms.
    const fresh = transformerLayout(config).initialize<Float32Array>(3);
    const { t } = trainer(3, small, fresh);
    const m = await t.update();
    expect(m.pairs).toBe(0);
    expect(m['reward/mean']).toBe(0);
    expect(m.loss).toBeUndefined();
    expect(t.step).toBe(1);
    expect(t.events).toEqual([{ step: 1, kind: 'skipped-update', reason: 'no preference pair' }]);
    expect(t.lastPairs).toEqual([]);
  });

  it('applies a live change at the next update and records it there', async () => {
    const { t } = trainer(4);
    await t.update();
    t.setHyperparams({ lr: 1e-4, beta: 0.5, lossType: 'ipo' });
    expect(t.config.lr).toBe(3e-3); // not yet
    const m = await t.update();
    expect(m['actor/lr']).toBe(1e-4);
    expect(t.config.lossType).toBe('ipo');
    expect(Number.isFinite(m.loss)).toBe(true);
    expect(t.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { lr: 1e-4, beta: 0.5, lossType: 'ipo' } },
    ]);
  });

  it('refuses bad values, naming the field and its range', () => {
    const { t } = trainer(5);
    expect(() => t.setHyperparams({ beta: 0 })).toThrow(OpInputError);
    expect(() => t.setHyperparams({ beta: 0 })).toThrow(/beta.*\(0, 100\]/);
    expect(() => t.setHyperparams({ labelSmoothing: 0.5 })).toThrow(/labelSmoothing.*\[0, 0.5\)/);
    expect(() => t.setHyperparams({ lossType: 'hinge' as 'ipo' })).toThrow(/lossType.*'sigmoid'/);
    expect(() => trainer(5, { ...small, samplesPerPrompt: 1 })).toThrow(
      /samplesPerPrompt.*\[2, 64\]/,
    );
    expect(t.config.beta).toBe(0.1);
  });

  it('is deterministic for a seed', async () => {
    const strip = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'perf/tokens_per_s'));
    const [a, b] = [trainer(6).t, trainer(6).t];
    for (let i = 0; i < 2; i++) expect(strip(await a.update())).toEqual(strip(await b.update()));
  });

  it(
    'raises the sampled success rate of a briefly warmed-up policy',
    { timeout: 60_000 },
    async () => {
      const { t } = trainer(7, { ...small, promptsPerUpdate: 8, samplesPerPrompt: 8, lr: 1e-3 });
      const rewards: number[] = [];
      for (let i = 0; i < 30; i++) rewards.push((await t.update())['reward/mean']!);
      const early = rewards.slice(0, 5).reduce((s, r) => s + r, 0) / 5;
      const late = rewards.slice(-5).reduce((s, r) => s + r, 0) / 5;
      console.log(
        `dpo: greedy success before ${warmSuccess}, sampled ${early.toFixed(3)} → ${late.toFixed(3)}`,
      );
      expect(warmSuccess).toBeLessThan(0.9); // room to improve
      expect(late).toBeGreaterThan(early + 0.1);
    },
  );
});

function reverse(prompt: string): string {
  return [...prompt.slice(0, -1)].reverse().join('');
}
