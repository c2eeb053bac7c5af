/**
 * PPO for the transformer on token tasks, with a critic: the value head on the policy's own trunk
 * (TRL's PPO with AutoModelForCausalLMWithValueHead; verl trains a separate critic model with the
 * same losses). One update, top to bottom:
 *   1. sample prompts, generate one completion each, score them with the verifier (+ shaping);
 *   2. old log-probs and values from the current model; optional KL-in-reward to the reference;
 *   3. GAE over the generated tokens (γ, λ), returns = advantages + values; whiten advantages
 *      (the ops of the policy's backend: src/rl/advantage-ops.ts);
 *   4. epochs × minibatches, each one policy step (src/rl/policy-step.ts; on a WebGPU model the
 *      loss runs as kernels): clipped policy loss + vfCoef · clipped value loss − entropy bonus,
 *      backward, clip, AdamW; stop the epochs early when the KL to the old policy passes targetKl.
 *
 * Metrics: reward/*, response_length/* (see token-tasks/rewards.ts), actor/pg_loss,
 * actor/pg_clipfrac, actor/ppo_kl, actor/entropy, critic/vf_loss, critic/vf_clipfrac,
 * critic/vf_explained_var, critic/values/mean, critic/advantages/mean, critic/returns/mean,
 * actor/reward_kl_penalty (KL in reward), actor/grad_norm, ppo/epochs_run, perf/generated_tokens,
 * perf/tokens_per_s; with a retained task (retained-task.ts) actor/ptx_loss and
 * retained/success_rate.
 */
import {
  checkRewardRules,
  DEFAULT_REWARD_CONFIG,
  REWARD_CONFIG_SPEC,
  type RewardConfig,
} from '../envs/token-tasks/rewards';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import { OpInputError } from '../ops/errors';
import { GAE_MASK_MODES, type GaeMaskMode } from '../ops/gae';
import type { KlEstimator } from '../ops/kl';
import { LOSS_AGG_MODES, type LossAggMode } from '../ops/loss-aggregation';
import { counterHash } from '../util/counter-rng';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import {
  nonFiniteReward,
  packRows,
  responseWidth,
  rollout,
  rolloutLength,
  rolloutMetrics,
  type PackedRows,
} from './token-rollout';
import { inspectBatch, type BatchArrays, type Inspection } from './inspection';
import { TaskLadder, type CurriculumSetup } from './curriculum';
import {
  checkRetained,
  DEFAULT_RETAINED_CONFIG,
  mixPtx,
  RETAINED_CONFIG_SPEC,
  retainedRowLength,
  retainedMetrics,
  type RetainedConfig,
} from './retained-task';
import { advantageOps } from './advantage-ops';
import { policyStep } from './policy-step';
import { checkRewardModelWeight, type CompletionScorer } from './reward-model';
import { RunControl, type Metrics, type Trainer } from './trainer';
import { RandomStreams, stateHooks } from './trainer-state';

/** PPO's settings; the reward's (RewardConfig) are among them, so they can change live too. */
export interface PpoLmConfig extends RewardConfig, RetainedConfig {
  promptsPerUpdate: number;
  maxNewTokens: number;
  temperature: number;
  lr: number;
  weightDecay: number;
  maxGradNorm: number;
  gamma: number;
  lambda: number;
  clipLow: number;
  clipHigh: number;
  cliprangeValue: number;
  vfCoef: number;
  entropyCoef: number;
  epochs: number;
  minibatches: number;
  whitenAdvantages: boolean;
  gaeMaskMode: GaeMaskMode;
  targetKl: number;
  klCoef: number;
  klEstimator: KlEstimator;
  lossAggregation: LossAggMode;
}

export const PPO_LM_CONFIG_SPEC: ConfigSpec<PpoLmConfig> = {
  promptsPerUpdate: {
    kind: 'int',
    min: 1,
    max: 1024,
    live: true,
    doc: 'Completions per update (one per prompt); must split into `minibatches` equal parts',
    framework: 'verl: data.train_batch_size; TRL: batch_size',
  },
  maxNewTokens: {
    kind: 'int',
    min: 1,
    max: 255,
    live: true,
    doc: 'Most tokens generated per completion',
    framework: 'verl: data.max_response_length; TRL: response_length',
  },
  temperature: {
    kind: 'number',
    min: 0,
    max: 4,
    minOpen: true,
    live: true,
    doc: 'Sampling temperature, also used when scoring the log-probs',
    framework: 'verl: rollout.temperature; TRL: temperature',
  },
  lr: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'AdamW learning rate (actor and value head share it)',
    framework: 'verl: actor.optim.lr, critic.optim.lr; TRL: learning_rate',
  },
  weightDecay: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'AdamW decoupled weight decay',
    framework: 'verl: optim.weight_decay; TRL: weight_decay',
  },
  maxGradNorm: {
    kind: 'number',
    min: 0,
    max: 1e6,
    live: true,
    doc: 'Clip the global gradient norm (0 = off)',
    framework: 'verl: actor.optim.clip_grad, critic.optim.clip_grad; TRL: max_grad_norm',
  },
  gamma: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'Discount per token',
    framework: 'verl: algorithm.gamma (1.0); TRL: gamma (1.0)',
  },
  lambda: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'GAE λ: 0 = one-step TD, 1 = Monte-Carlo returns',
    framework: 'verl: algorithm.lam (1.0); TRL: lam (0.95)',
  },
  clipLow: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    maxOpen: true,
    live: true,
    doc: 'Lower clip of the ratio (1 − clipLow)',
    framework: 'verl: clip_ratio_low; TRL: cliprange',
  },
  clipHigh: {
    kind: 'number',
    min: 0,
    max: 10,
    minOpen: true,
    live: true,
    doc: 'Upper clip of the ratio (1 + clipHigh)',
    framework: 'verl: clip_ratio_high; TRL: cliprange',
  },
  cliprangeValue: {
    kind: 'number',
    min: 0,
    max: 100,
    minOpen: true,
    live: true,
    doc: 'Values may move at most this far from the old values before the loss stops caring',
    framework: 'verl: critic.cliprange_value (0.5); TRL: cliprange_value (0.2)',
  },
  vfCoef: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'Weight of the value loss in the shared loss',
    framework: 'TRL: vf_coef (0.1)',
  },
  entropyCoef: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'Entropy bonus weight',
    framework: 'verl: actor.entropy_coeff',
  },
  epochs: {
    kind: 'int',
    min: 1,
    max: 32,
    live: true,
    doc: 'Passes over each rollout batch',
    framework: 'verl: ppo_epochs; TRL: num_ppo_epochs (4)',
  },
  minibatches: {
    kind: 'int',
    min: 1,
    max: 1024,
    live: true,
    doc: 'Optimizer steps per epoch (the batch is split into this many)',
    framework: 'verl: ppo_mini_batch_size (as a size); TRL: num_mini_batches',
  },
  whitenAdvantages: {
    kind: 'boolean',
    live: true,
    doc: 'Normalise advantages to mean 0, std 1 over the batch',
    framework: 'verl: masked_whiten in GAE; TRL: whiten_advantages',
  },
  gaeMaskMode: {
    kind: 'choice',
    options: GAE_MASK_MODES,
    live: true,
    doc: "How GAE crosses untrained tokens (tool results in agent episodes): 'skip' them, as if the trajectory had no such steps, or treat each as a zero-reward step",
    framework:
      "'skip': verl compute_gae_advantage_return; 'zero-step': OpenRLHF get_advantages_and_returns, TRL PPOTrainer",
  },
  targetKl: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'Stop the epochs once the KL to the rollout policy exceeds this (0 = never)',
    framework: 'CleanRL: target_kl; OpenRLHF: --target_kl',
  },
  klCoef: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: "Weight of the KL to the starting policy, subtracted from each token's reward",
    framework: 'verl: algorithm.kl_ctrl.kl_coef (use_kl_in_reward); TRL: kl_coef (0.05)',
  },
  klEstimator: {
    kind: 'choice',
    options: ['k1', 'k2', 'k3'],
    live: true,
    doc: 'KL estimator for the reward penalty',
    framework: "verl: algorithm.kl_penalty ('kl' = k1)",
  },
  lossAggregation: {
    kind: 'choice',
    options: LOSS_AGG_MODES,
    live: true,
    doc: 'How per-token losses become one number',
    framework: 'verl: loss_agg_mode',
  },
  ...REWARD_CONFIG_SPEC,
  ...RETAINED_CONFIG_SPEC,
};

export const DEFAULT_PPO_LM_CONFIG: PpoLmConfig = {
  ...DEFAULT_REWARD_CONFIG,
  ...DEFAULT_RETAINED_CONFIG,
  promptsPerUpdate: 32,
  maxNewTokens: 8,
  temperature: 1,
  lr: 1e-3,
  weightDecay: 0,
  maxGradNorm: 1,
  gamma: 1,
  lambda: 0.95,
  clipLow: 0.2,
  clipHigh: 0.2,
  cliprangeValue: 0.2,
  vfCoef: 0.1,
  entropyCoef: 0,
  epochs: 2,
  minibatches: 2,
  whitenAdvantages: true,
  gaeMaskMode: 'skip',
  targetKl: 0,
  klCoef: 0,
  klEstimator: 'k1',
  lossAggregation: 'token-mean',
};

export interface PpoLmSetup {
  /** The policy; its config must have a value head (the critic). */
  policy: LanguageModel;
  reference?: LanguageModel;
  tokenizer: CharTokenizer;
  task: TokenTask & { readonly answerChars?: string };
  seed: number;
  /** Harder rungs of the task as the pass rate allows (as GRPO's; see TaskLadder). */
  curriculum?: CurriculumSetup<TokenTask & { readonly answerChars?: string }>;
  /** A learned reward model (src/rl/reward-model.ts); rewardModelWeight > 0 needs one. */
  rewardModel?: CompletionScorer;
  /** A second task to keep: ptx demonstrations and retained/success_rate (retained-task.ts). */
  retained?: TokenTask;
}

function checkPpoLmRules(config: PpoLmConfig, setup: PpoLmSetup): void {
  checkRewardModelWeight(config, setup.rewardModel, 'ppo');
  checkRetained(config, setup.retained, setup.policy.config.context, 'ppo');
  checkRewardRules(config, 'ppo');
  if (config.promptsPerUpdate % config.minibatches !== 0) {
    throw new OpInputError(
      'ppo',
      'minibatches',
      `must divide promptsPerUpdate (${config.promptsPerUpdate}) into equal minibatches, got ${config.minibatches}`,
    );
  }
}

export function createPpoLmTrainer(setup: PpoLmSetup, initial: PpoLmConfig): Trainer<PpoLmConfig> {
  checkConfig('ppo', PPO_LM_CONFIG_SPEC, initial);
  checkPpoLmRules(initial, setup);
  if (!setup.policy.config.valueHead) {
    throw new OpInputError('ppo', 'policy', 'needs a transformer with a value head (the critic)');
  }
  const control = new RunControl(initial);
  const { policy, tokenizer, curriculum } = setup;
  const ops = advantageOps(policy);
  const ladder = new TaskLadder(setup.task, curriculum);
  const streams = new RandomStreams({
    prompts: setup.seed,
    shuffle: counterHash(setup.seed, 0, 1),
  });
  // The last update's arrays, turned into per-token records when the inspector asks.
  let lastBatch: BatchArrays | undefined;
  let lastInspection: Inspection | undefined;

  async function update(): Promise<Metrics> {
    const cfg = control.beginUpdate();
    control.phase('generating');
    if (cfg.klCoef > 0 && !setup.reference) {
      throw new Error('ppo: klCoef > 0 needs a reference model in the setup');
    }
    const started = performance.now();

    // 1. Rollout: one completion per prompt.
    const rolloutRow = rolloutLength(policy.config.context, ladder.task, cfg.maxNewTokens);
    const samples: TokenTaskSample[] = Array.from({ length: cfg.promptsPerUpdate }, () =>
      ladder.task.sample(streams.get('prompts')),
    );
    const rows = await rollout({
      policy,
      tokenizer,
      task: ladder.task,
      rewards: cfg,
      samples,
      maxLength: rolloutRow,
      maxNewTokens: cfg.maxNewTokens,
      sampling: { temperature: cfg.temperature },
      ...(setup.rewardModel ? { rewardModel: setup.rewardModel } : {}),
      seed: counterHash(setup.seed, control.step, 0),
    });
    control.phase('updating');
    const badReward = nonFiniteReward(rows);
    if (badReward) {
      control.endUpdate({ skipped: badReward });
      return rolloutMetrics(rows);
    }
    // With a retained task, room for its demonstrations, which join these rows in the loss.
    const batch = packRows(rows, {
      width: setup.retained ? retainedRowLength(setup.retained) - 1 : 0,
    });
    const { rows: B, seq: T, mask } = batch;

    // 2. Old log-probs and values; the KL penalty goes into the rewards.
    const old = await policy.scoreTokens(batch.tokens, batch.targets, B, T, cfg.temperature);
    const oldValues = maskedCopy(old.values!, mask);
    let rewards = batch.tokenRewards;
    let rewardKl: number | undefined;
    if (cfg.klCoef > 0) {
      const ref = await setup.reference!.scoreTokens(
        batch.tokens,
        batch.targets,
        B,
        T,
        cfg.temperature,
      );
      const kl = await ops.perTokenKl(old.logp, ref.logp, mask, B, T, {
        estimator: cfg.klEstimator,
      });
      const penalized = await ops.klRewardPenalty(rewards, kl.kl, mask, B, T, cfg.klCoef);
      rewards = penalized.rewards;
      rewardKl = penalized.klMean;
    }

    // #region gae
    // 3. GAE over generated tokens; whitened advantages for the policy, raw returns for the critic.
    const gaeInput = { rewards, values: oldValues, mask };
    const { advantages: rawAdvantages, returns } = await ops.gae(gaeInput, B, T, {
      gamma: cfg.gamma,
      lambda: cfg.lambda,
      maskMode: cfg.gaeMaskMode,
    });
    const advantages = cfg.whitenAdvantages
      ? (await ops.whiten(rawAdvantages, mask, B, T)).output
      : rawAdvantages;
    // #endregion gae

    // 4. Epochs × minibatches.
    const perMinibatch = B / cfg.minibatches;
    // verl and TRL normalise the token-sum modes by the response width (max_response_length /
    // max_completion_length), not by our rows' full width, which also holds the prompt.
    // The rollout's own width: rows widened for ptx demonstrations keep the same normalization.
    const width = responseWidth(ladder.task, cfg.maxNewTokens, rolloutRow - 1);
    const aggregation = {
      mode: cfg.lossAggregation,
      lossScaleFactor: width,
      maxCompletionLength: width,
    };
    const lossMetrics: Metrics = {};
    let epochsRun = 0;
    let skipped: string | undefined;
    epochs: for (let epoch = 0; epoch < cfg.epochs; epoch++) {
      const order = permutation(B, streams.get('shuffle'));
      let klSum = 0;
      for (let mb = 0; mb < cfg.minibatches; mb++) {
        const picked = order.slice(mb * perMinibatch, (mb + 1) * perMinibatch);
        const part = selectRows(picked, T, {
          tokens: batch.tokens,
          targets: batch.targets,
          mask,
          oldLogp: old.logp,
          oldValues,
          advantages,
          returns,
        });
        const n = picked.length;
        const ptx = mixPtx(
          setup.retained,
          tokenizer,
          cfg,
          { tokens: part.tokens, targets: part.targets, rows: n, seq: T },
          { seed: setup.seed, step: control.step, key: epoch * cfg.minibatches + mb },
        );
        const step = await policyStep(policy, {
          tokens: ptx?.tokens ?? part.tokens,
          targets: ptx?.targets ?? part.targets,
          rows: n,
          seq: T,
          temperature: cfg.temperature,
          mask: part.mask,
          advantages: part.advantages,
          oldLogp: part.oldLogp,
          policyLoss: {
            clipLow: cfg.clipLow,
            clipHigh: cfg.clipHigh,
            dualClip: null,
            aggregation: cfg.lossAggregation,
            lossScaleFactor: width,
            maxCompletionLength: width,
          },
          aggregation,
          entropyCoef: cfg.entropyCoef,
          value: {
            oldValues: part.oldValues,
            returns: part.returns,
            coef: cfg.vfCoef,
            options: { cliprangeValue: cfg.cliprangeValue },
          },
          ...(ptx ? { ptx: { mask: ptx.mask, coef: cfg.ptxCoef } } : {}),
          optimizer: { lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm },
        });
        if (step.skipped) {
          skipped = step.skipped;
          break epochs;
        }
        const losses = step.losses!;
        if (losses.ptxLoss !== undefined) lossMetrics['actor/ptx_loss'] = losses.ptxLoss;
        klSum += losses.pgStats.ppo_kl;
        Object.assign(lossMetrics, {
          'actor/pg_loss': losses.pgLoss,
          'actor/pg_clipfrac': losses.pgStats.pg_clipfrac,
          'actor/ppo_kl': losses.pgStats.ppo_kl,
          'actor/entropy': losses.entropy,
          'critic/vf_loss': losses.vfLoss,
          'critic/vf_clipfrac': losses.vfClipfrac,
        });
      }
      epochsRun += 1;
      if (cfg.targetKl > 0 && klSum / cfg.minibatches > cfg.targetKl) break;
    }
    const steps = await policy.takeMetrics();
    const last = steps[steps.length - 1];
    if (last && !last.applied) skipped ??= 'non-finite gradient norm';
    control.endUpdate(skipped ? { skipped } : {});
    lastInspection = undefined;
    lastBatch = {
      rows,
      groupSize: 1,
      seq: T,
      targets: batch.targets,
      mask,
      advantages: rawAdvantages,
      oldLogp: old.logp,
      values: oldValues,
      returns,
      clip: { clipLow: cfg.clipLow, clipHigh: cfg.clipHigh },
    };

    const generated = rows.reduce((sum, r) => sum + r.completion.length, 0);
    const seconds = (performance.now() - started) / 1000;
    const rewardSummary = rolloutMetrics(rows);
    return {
      ...rewardSummary,
      ...ladder.observe(rewardSummary['reward/accuracy']!, control.step, control.events),
      ...lossMetrics,
      ...definedMetric(
        'critic/vf_explained_var',
        (await ops.explainedVariance(returns, oldValues, mask, B, T)).value,
      ),
      'critic/values/mean': maskedMean(oldValues, mask),
      'critic/advantages/mean': maskedMean(rawAdvantages, mask),
      'critic/returns/mean': maskedMean(returns, mask),
      ...(rewardKl === undefined ? {} : { 'actor/reward_kl_penalty': rewardKl }),
      ...(await retainedMetrics(policy, tokenizer, setup.retained, cfg)),
      'actor/grad_norm': last?.gradNorm ?? NaN,
      'actor/lr': cfg.lr,
      'ppo/epochs_run': epochsRun,
      'perf/generated_tokens': generated,
      'perf/tokens_per_s': generated / seconds,
    };
  }

  return control.expose({
    algorithm: 'ppo',
    ...stateHooks({
      algorithm: 'ppo',
      control,
      streams,
      checkConfig: (config: PpoLmConfig) => {
        checkConfig('ppo', PPO_LM_CONFIG_SPEC, config);
        checkPpoLmRules(config, setup);
      },
      ...(curriculum
        ? { curriculum: curriculum.scheduler, afterRestore: () => ladder.sync() }
        : {}),
    }),
    update,
    inspect(): Inspection | undefined {
      if (!lastBatch) return undefined;
      lastInspection ??= {
        kind: 'samples',
        algorithm: 'ppo',
        step: control.step,
        groupSize: 1,
        has: { ratio: false, value: true },
        samples: inspectBatch(tokenizer, lastBatch),
      };
      return lastInspection;
    },
    setHyperparams(partial: Partial<PpoLmConfig>) {
      checkPartial('ppo', PPO_LM_CONFIG_SPEC, partial, { liveOnly: true });
      checkPpoLmRules({ ...control.config, ...partial }, setup);
      control.queue(partial);
    },
  });
}

/** A metric only where it is defined (explained variance needs variance in the returns). */
function definedMetric(name: string, value: number | undefined): Metrics {
  return value === undefined ? {} : { [name]: value };
}

/** values · mask: padding and prompt positions carry no value (verl masks them the same way). */
function maskedCopy(values: Float32Array, mask: Float32Array): Float32Array {
  return values.map((v, i) => (mask[i] === 1 ? v : 0));
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

/** A seeded Fisher–Yates shuffle of 0 … n−1. */
function permutation(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

type RowArrays = Pick<PackedRows, 'tokens' | 'targets' | 'mask'> & {
  oldLogp: Float32Array;
  oldValues: Float32Array;
  advantages: Float32Array;
  returns: Float32Array;
};

/** The rows `picked` of every (B, T) array, in that order. */
function selectRows(picked: readonly number[], T: number, arrays: RowArrays): RowArrays {
  const take = <A extends Int32Array | Float32Array>(x: A): A => {
    const out = new (x.constructor as new (n: number) => A)(picked.length * T);
    picked.forEach((row, i) => out.set(x.subarray(row * T, (row + 1) * T), i * T));
    return out;
  };
  return {
    tokens: take(arrays.tokens),
    targets: take(arrays.targets),
    mask: take(arrays.mask),
    oldLogp: take(arrays.oldLogp),
    oldValues: take(arrays.oldValues),
    advantages: take(arrays.advantages),
    returns: take(arrays.returns),
  };
}
