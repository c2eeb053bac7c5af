/**
 * The learned reward model: comparison pairs (right against wrong answers of one prompt, labels
 * flipped as labelNoise says), Bradley–Terry training of a real small transformer with a scalar
 * head, normalized scores, the reward term a rollout adds, and the refusals.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_REWARD_CONFIG, summarizeRewards } from '../../src/envs/token-tasks/rewards';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG } from '../../src/rl/grpo-config';
import {
  collectComparisons,
  DEFAULT_REWARD_MODEL_CONFIG,
  trainRewardModel,
  type CompletionScorer,
  type RewardModelConfig,
} from '../../src/rl/reward-model';
import { rollout } from '../../src/rl/token-rollout';
import { SCRIPTED_COPY } from '../support/scripted-policy';

const { tokenizer, task, MAX_NEW, scripted, tinyConfig } = SCRIPTED_COPY;

const small: RewardModelConfig = {
  ...DEFAULT_REWARD_MODEL_CONFIG,
  prompts: 20,
  samplesPerPrompt: 4,
  steps: 40,
  pairsPerStep: 8,
  lr: 3e-3,
};

/** A real transformer with a scalar head, as the run builds the reward model (random start). */
function scorerModel(seed: number): CpuLanguageModel {
  const config = tinyConfig(true);
  return new CpuLanguageModel(config, transformerLayout(config).initialize<Float32Array>(seed));
}

describe('collectComparisons', () => {
  it('pairs right with wrong answers of the same prompt, min(#right, #wrong) per prompt', async () => {
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      small,
      MAX_NEW,
      1,
    );
    // 4 answers per prompt: 2 right (rows 0, 2), 2 wrong (rows 1, 3) → 2 pairs per prompt.
    expect(data.rows).toHaveLength(80);
    expect(data.pairs).toHaveLength(40);
    for (const pair of data.pairs) {
      expect(pair.flipped).toBe(false);
      expect(Math.floor(pair.chosen / 4)).toBe(Math.floor(pair.rejected / 4));
      expect(data.rows[pair.chosen]!.reward.strictlyVerified).toBe(true);
      expect(data.rows[pair.rejected]!.completion.text).toBe('eeeee');
    }
  });

  it('flips about labelNoise of the labels, and the flipped ones prefer the wrong answer', async () => {
    const noisy = { ...small, prompts: 200, labelNoise: 0.3 };
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      noisy,
      MAX_NEW,
      2,
    );
    const flipped = data.pairs.filter((p) => p.flipped);
    // 400 pairs, each flipped with probability 0.3: 120 expected, std ≈ 9.2.
    expect(flipped.length).toBeGreaterThan(90);
    expect(flipped.length).toBeLessThan(150);
    for (const pair of flipped) expect(data.rows[pair.chosen]!.completion.text).toBe('eeeee');
  });
});

describe('trainRewardModel', () => {
  it('learns to score right answers above wrong ones, held-out pairs included', async () => {
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      small,
      MAX_NEW,
      3,
    );
    const steps: number[] = [];
    const long = { ...small, steps: 100 };
    const { rewardModel, report } = await trainRewardModel(
      scorerModel(1),
      data,
      long,
      3,
      (done) => {
        steps.push(done);
      },
    );
    expect(steps).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(report.pairs).toBe(40);
    expect(report.heldOutPairs).toBe(8); // a fifth, never trained on
    expect(report.firstLoss).toBeGreaterThan(0.5); // about ln 2 from a random head
    expect(report.lastLoss).toBeLessThan(0.2);
    expect(report.heldOutAccuracy).toBe(1);

    // Normalized over the comparison data: mean 0 and std 1 (population std, as computed).
    const scored = data.pairs.flatMap((p) => [data.rows[p.chosen]!, data.rows[p.rejected]!]);
    const scores = await rewardModel.score(scored);
    const mean = scores.reduce((s, v) => s + v, 0) / scores.length;
    const std = Math.sqrt(scores.reduce((s, v) => s + (v - mean) ** 2, 0) / scores.length);
    expect(mean).toBeCloseTo(0, 4);
    expect(std).toBeCloseTo(1, 4);
    data.pairs.forEach((p, i) => expect(scores[2 * i]!).toBeGreaterThan(scores[2 * i + 1]!));
  });

  it('is deterministic for a seed', async () => {
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      small,
      MAX_NEW,
      4,
    );
    const quick = { ...small, steps: 5 };
    const a = await trainRewardModel(scorerModel(2), data, quick, 4);
    const b = await trainRewardModel(scorerModel(2), data, quick, 4);
    expect(b.report).toEqual(a.report);
  });

  it('refuses comparisons without two pairs, and settings out of range, naming the field', async () => {
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee', right: false }),
      tokenizer,
      task,
      small,
      MAX_NEW,
      5,
    );
    expect(data.pairs).toHaveLength(0); // never right: nothing to compare
    await expect(trainRewardModel(scorerModel(3), data, small, 5)).rejects.toThrow(
      /rewardModel: pairs needs at least 2 right\/wrong pairs, the starting policy gave 0/,
    );
    for (const [field, value] of [
      ['steps', 0],
      ['labelNoise', 0.5],
      ['prompts', 2.5],
    ] as const) {
      const bad = { ...small, [field]: value };
      await expect(
        collectComparisons(scripted({ wrong: 'e' }), tokenizer, task, bad, MAX_NEW, 1),
      ).rejects.toThrow(new RegExp(`^rewardModel: ${field} must be`));
    }
  });
});

describe('a reward model in the rollout and the trainers', () => {
  /** Scores every row with the next of `values`. */
  const fixed = (values: number[]): CompletionScorer => ({
    score: async (rows) => Float32Array.from(rows, (_, i) => values[i]!),
  });

  it('adds rewardModelWeight × score to each reward, as the reward/model term', async () => {
    const samples = [task.sample(() => 0.1), task.sample(() => 0.1)];
    const rows = await rollout({
      policy: scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      rewards: { ...DEFAULT_REWARD_CONFIG, rewardModelWeight: 2 },
      samples,
      maxLength: task.maxChars + 1 + MAX_NEW,
      maxNewTokens: MAX_NEW,
      sampling: { temperature: 1 },
      seed: 1,
      rewardModel: fixed([0.5, -1]),
    });
    // Row 0 is right (verifier 1), row 1 wrong (0): totals 1 + 2·0.5 = 2 and 0 + 2·(−1) = −2.
    expect(rows.map((r) => r.reward.model)).toEqual([1, -2]);
    expect(rows.map((r) => r.reward.total)).toEqual([2, -2]);
    expect(summarizeRewards(rows.map((r) => r.reward))['reward/model']).toBe(-0.5);
    // Without a reward model the term and its metric are absent.
    const plain = await rollout({
      policy: scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      rewards: DEFAULT_REWARD_CONFIG,
      samples,
      maxLength: task.maxChars + 1 + MAX_NEW,
      maxNewTokens: MAX_NEW,
      sampling: { temperature: 1 },
      seed: 1,
    });
    expect(plain[0]!.reward.model).toBeUndefined();
    expect(summarizeRewards(plain.map((r) => r.reward))).not.toHaveProperty('reward/model');
  });

  it('refuses rewardModelWeight > 0 in a run without a reward model, at creation and live', () => {
    const policy = scorerModel(4); // any transformer will do for the checks
    const setup = { policy, tokenizer, task, seed: 1 };
    const make = (weight: number) =>
      createGrpoTrainer(setup, { ...DEFAULT_GRPO_CONFIG, rewardModelWeight: weight });
    expect(() => make(0.5)).toThrow(OpInputError);
    expect(() => make(0.5)).toThrow(
      /grpo: rewardModelWeight must be 0 in a run without a reward model/,
    );
    const trainer = make(0);
    expect(() => trainer.setHyperparams({ rewardModelWeight: 1 })).toThrow(/rewardModelWeight/);
    expect(trainer.config.rewardModelWeight).toBe(0); // nothing queued
    const withModel = createGrpoTrainer(
      { ...setup, rewardModel: fixed([]) },
      { ...DEFAULT_GRPO_CONFIG, rewardModelWeight: 1 },
    );
    expect(() => withModel.setHyperparams({ rewardModelWeight: 0 })).not.toThrow();
  });
});
