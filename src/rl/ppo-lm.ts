/**
 * PPO for the transformer on token tasks, with a critic: the value head on the policy's own trunk
 * (TRL's PPO with AutoModelForCausalLMWithValueHead; verl trains a separate critic model with the
 * same losses). The update's pipeline is the one every token-RL algorithm shares
 * (src/rl/lm-pipeline.ts: rollout, reward shaping with the KL in the reward, policy steps,
 * metrics); what is PPO's own is here:
 *   - the rollout: one completion per prompt;
 *   - the critic: old values scored with the old log-probs, GAE over the generated tokens (γ, λ),
 *     returns = advantages + values, whitened advantages for the policy (the ops of the policy's
 *     backend: src/rl/advantage-ops.ts), and the clipped value loss (vfCoef) in every step;
 *   - epochs × shuffled minibatches, stopped early once the KL to the old policy passes targetKl.
 *
 * Metrics, besides the pipeline's (reward/*, response_length/*, actor/pg_loss, actor/pg_clipfrac,
 * actor/ppo_kl, actor/entropy, actor/reward_kl_penalty, actor/ptx_loss, retained/success_rate,
 * actor/grad_norm, perf/*): critic/vf_loss, critic/vf_clipfrac, critic/vf_explained_var,
 * critic/values/mean, critic/advantages/mean, critic/returns/mean, ppo/epochs_run.
 */
import { checkRewardRules } from '../envs/token-tasks/rewards';
import { OpInputError } from '../ops/errors';
import { counterHash } from '../util/counter-rng';
import type { AdvantageOps } from './advantage-ops';
import { inspectBatch, type BatchArrays, type Inspection } from './inspection';
import {
  createTokenRlRun,
  generateRows,
  tokenRlUpdate,
  type Advantages,
  type ScoredBatch,
  type TokenRlRun,
  type TokenRlSetup,
} from './lm-pipeline';
import { PPO_LM_CONFIG_SPEC, type PpoLmConfig } from './ppo-lm-config';
import { checkRetained } from './retained-task';
import { checkRewardModelWeight } from './reward-model';
import type { Metrics, Trainer } from './trainer';

export { DEFAULT_PPO_LM_CONFIG, PPO_LM_CONFIG_SPEC, type PpoLmConfig } from './ppo-lm-config';

/** The setup of any token-RL algorithm; the policy's config must have a value head (the critic). */
export type PpoLmSetup = TokenRlSetup;

function checkPpoLmRules(config: PpoLmConfig, setup: PpoLmSetup): void {
  checkRewardModelWeight(config, setup.rewardModel, 'ppo');
  checkRetained(config, setup.retained, setup.policy.spec.context, 'ppo');
  checkRewardRules(config, 'ppo');
  if (config.promptsPerUpdate % config.minibatches !== 0) {
    throw new OpInputError(
      'ppo',
      'minibatches',
      `must divide promptsPerUpdate (${config.promptsPerUpdate}) into equal minibatches, got ${config.minibatches}`,
    );
  }
}

type PpoRun = TokenRlRun<PpoLmConfig, 'prompts' | 'shuffle'>;

export function createPpoLmTrainer(setup: PpoLmSetup, initial: PpoLmConfig): Trainer<PpoLmConfig> {
  const run: PpoRun = createTokenRlRun(setup, {
    algorithm: 'ppo',
    spec: PPO_LM_CONFIG_SPEC,
    rules: (config: PpoLmConfig) => checkPpoLmRules(config, setup),
    initial,
    seeds: { prompts: setup.seed, shuffle: counterHash(setup.seed, 0, 1) },
  });
  if (!setup.policy.spec.valueHead) {
    throw new OpInputError('ppo', 'policy', 'needs a transformer with a value head (the critic)');
  }
  const { control, streams, ops } = run;
  // The last update's arrays, turned into per-token records when the inspector asks.
  let lastBatch: BatchArrays | undefined;
  let lastInspection: Inspection | undefined;

  async function update(): Promise<Metrics> {
    const { metrics, trained } = await tokenRlUpdate(run, {
      rollout: async (cfg, rowLength) => {
        const samples = Array.from({ length: cfg.promptsPerUpdate }, () =>
          run.ladder.task.sample(streams.get('prompts')),
        );
        const sampling = { temperature: cfg.temperature };
        const rows = await generateRows(run, cfg, samples, rowLength, { round: 0, sampling });
        const generated = rows.reduce((sum, r) => sum + r.completion.length, 0);
        return { rows, generated, metrics: {} };
      },
      klPenalty: () => 'reward',
      critic: (cfg) => ({ coef: cfg.vfCoef, cliprangeValue: cfg.cliprangeValue }),
      advantages: (cfg, batch) => gaeAdvantages(ops, cfg, batch),
      passes: (cfg) => ({
        epochs: cfg.epochs,
        minibatches: cfg.minibatches,
        shuffle: streams.get('shuffle'),
        targetKl: cfg.targetKl,
      }),
      lossMetrics: (losses) => ({
        'critic/vf_loss': losses.vfLoss!,
        'critic/vf_clipfrac': losses.vfClipfrac!,
      }),
    });
    if (!trained) return metrics;
    const cfg = control.config;
    const { batch, advantages } = trained;
    lastInspection = undefined;
    lastBatch = {
      rows: trained.rows,
      groupSize: 1,
      seq: batch.seq,
      targets: batch.targets,
      mask: batch.mask,
      advantages: advantages.shown!,
      oldLogp: trained.oldLogp!,
      values: batch.oldValues!,
      returns: advantages.returns!,
      clip: { clipLow: cfg.clipLow, clipHigh: cfg.clipHigh },
    };
    return { ...metrics, 'ppo/epochs_run': trained.epochsRun };
  }

  return run.expose<Trainer<PpoLmConfig>>({
    update,
    inspect(): Inspection | undefined {
      if (!lastBatch) return undefined;
      lastInspection ??= {
        kind: 'samples',
        algorithm: 'ppo',
        step: control.step,
        groupSize: 1,
        has: { ratio: false, value: true },
        samples: inspectBatch(setup.tokenizer, lastBatch),
      };
      return lastInspection;
    },
  });
}

/** GAE over the generated tokens: whitened advantages for the policy, raw returns for the critic. */
async function gaeAdvantages(
  ops: AdvantageOps,
  cfg: PpoLmConfig,
  batch: ScoredBatch,
): Promise<Advantages> {
  const { rewards, mask, rows: B, seq: T } = batch;
  const values = batch.oldValues!;
  // #region gae
  const { advantages: raw, returns } = await ops.gae({ rewards, values, mask }, B, T, {
    gamma: cfg.gamma,
    lambda: cfg.lambda,
    maskMode: cfg.gaeMaskMode,
  });
  const advantages = cfg.whitenAdvantages ? (await ops.whiten(raw, mask, B, T)).output : raw;
  // #endregion gae
  // Explained variance needs variance in the returns: reported only where it is defined.
  const explained = (await ops.explainedVariance(returns, values, mask, B, T)).value;
  return {
    advantages,
    shown: raw,
    returns,
    metrics: {
      ...(explained === undefined ? {} : { 'critic/vf_explained_var': explained }),
      'critic/values/mean': maskedMean(values, mask),
      'critic/advantages/mean': maskedMean(raw, mask),
      'critic/returns/mean': maskedMean(returns, mask),
    },
  };
}

function maskedMean(x: Float32Array, mask: Float32Array): number {
  let sum = 0;
  let count = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 1) {
      sum += x[i]!;
      count += 1;
    }
  }
  return count ? sum / count : 0;
}
