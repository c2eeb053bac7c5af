/** PPO with a value-head critic on the transformer (CPU backend). */
import { describe, expect, it } from 'vitest';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG, type PpoLmConfig } from '../../src/rl/ppo-lm';
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
  valueHead: true,
};
const small: PpoLmConfig = { ...DEFAULT_PPO_LM_CONFIG, promptsPerUpdate: 16, maxNewTokens: 5 };

function trainer(seed: number, cfg: PpoLmConfig = small, params?: Float32Array) {
  const start = params ?? transformerLayout(config).initialize<Float32Array>(seed);
  const policy = new CpuLanguageModel(config, start);
  const reference = new CpuLanguageModel(config, start);
  return createPpoLmTrainer({ policy, reference, tokenizer, task, seed }, cfg);
}

describe('PPO with a value head (CPU)', () => {
  it('runs updates with finite actor and critic metrics', async () => {
    const t = trainer(1, { ...small, klCoef: 0.05, entropyCoef: 0.01 });
    for (let i = 0; i < 2; i++) {
      const m = await t.update();
      for (const key of [
        'actor/pg_loss',
        'actor/ppo_kl',
        'actor/entropy',
        'critic/vf_loss',
        'critic/vf_clipfrac',
        'critic/values/mean',
        'actor/grad_norm',
        'actor/reward_kl_penalty',
      ]) {
        expect(Number.isFinite(m[key]), key).toBe(true);
      }
      expect(m['ppo/epochs_run']).toBe(2);
    }
  });

  it('needs a value head, and a batch that splits into the minibatches', () => {
    const policy = new CpuLanguageModel(
      { ...config, valueHead: false },
      transformerLayout({ ...config, valueHead: false }).initialize(1),
    );
    expect(() => createPpoLmTrainer({ policy, tokenizer, task, seed: 1 }, small)).toThrow(
      /value head/,
    );
    expect(() => trainer(1, { ...small, minibatches: 3 })).toThrow(OpInputError);
    expect(() => trainer(1, { ...small, minibatches: 3 })).toThrow(/promptsPerUpdate \(16\)/);
    expect(() => trainer(1).setHyperparams({ lambda: 1.5 })).toThrow(/lambda.*\[0, 1\]/);
  });

  it('stops the epochs early when the KL passes targetKl', async () => {
    const t = trainer(2, { ...small, epochs: 8, targetKl: 1e-9, lr: 1e-2, entropyCoef: 0.1 });
    const m = await t.update();
    expect(m['ppo/epochs_run']).toBeLessThan(8);
  });

  it('skips an update whose reward is not finite, naming the term and the row', async () => {
    const start = transformerLayout(config).initialize<Float32Array>(6);
    const policy = new CpuLanguageModel(config, start);
    const rewardModel = {
      async score(rows: readonly unknown[]) {
        const out = new Float32Array(rows.length).fill(0.5);
        out[3] = NaN;
        return out;
      },
    };
    const t = createPpoLmTrainer(
      { policy, tokenizer, task, seed: 6, rewardModel },
      { ...small, rewardModelWeight: 1 },
    );
    await t.update();
    expect(t.step).toBe(1);
    expect(t.events).toEqual([
      {
        step: 1,
        kind: 'skipped-update',
        reason: "non-finite reward: the 'model' term of row 3 is NaN; update skipped",
      },
    ]);
    expect(await policy.readParams()).toEqual(start);
  });

  it('is deterministic for a seed', async () => {
    const strip = (m: Record<string, number>) =>
      Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'perf/tokens_per_s'));
    const [a, b] = [trainer(3), trainer(3)];
    for (let i = 0; i < 2; i++) expect(strip(await a.update())).toEqual(strip(await b.update()));
  });

  it(
    'raises the reward of a briefly warmed-up policy and fits its critic',
    { timeout: 120_000 },
    async () => {
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
      const t = trainer(
        7,
        { ...small, promptsPerUpdate: 64, minibatches: 4, lr: 1e-3 },
        await warm.readParams(),
      );
      const history: Record<string, number>[] = [];
      for (let i = 0; i < 30; i++) history.push(await t.update());
      const mean = (key: string, from: number, to: number) =>
        history.slice(from, to).reduce((s, m) => s + m[key]!, 0) / (to - from);
      // Measured: sampled reward 0.53 → 0.88 (first vs last 5 updates); value loss 0.136 → 0.044.
      expect(mean('reward/mean', 25, 30)).toBeGreaterThan(mean('reward/mean', 0, 5) + 0.1);
      expect(mean('critic/vf_loss', 25, 30)).toBeLessThan(mean('critic/vf_loss', 0, 5));
    },
  );
});
