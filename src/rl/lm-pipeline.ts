/**
 * One update of reinforcement learning on a token task, as every such algorithm takes it (GRPO and
 * its family, PPO with a critic), written once. The algorithm's file supplies only its own parts
 * (TokenRlParts): how it samples its rows, its advantages, whether it has a critic. Top to bottom:
 *
 *   1. rollout: the algorithm's rows, generated and scored by the task's verifier (+ shaping:
 *      length, overlong, tool costs, a reward model), each reward on its last generated token;
 *   2. pack the rows into (B, T) arrays (T = L − 1: inputs 0 … L−2, targets 1 … L−1), wide enough
 *      for a retained task's demonstrations;
 *   3. the reference's log-probs when the KL is on; the behaviour policy's (and the critic's
 *      values) when the advantages need them; the KL in the reward (verl use_kl_in_reward);
 *   4. the algorithm's advantages (B, T);
 *   5. epochs × minibatches of policy steps (src/rl/lm-policy-passes.ts), each the clipped policy
 *      loss (+ KL in the loss, − entropy bonus, + value loss, + ptx), backward, clip, AdamW;
 *      stopped early when the KL to the behaviour policy passes targetKl;
 *   6. metrics named as verl / TRL name them.
 */
import type { RewardConfig } from '../envs/token-tasks/rewards';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { Tokenizer } from '../models/tokenizer-api';
import type { KlEstimator } from '../ops/kl';
import type { LossAggMode } from '../ops/loss-aggregation';
import type { SampleOptions } from '../ops/nn/sample';
import { counterHash } from '../util/counter-rng';
import type { ConfigSpec } from '../util/hyperparams';
import { advantageOps, type AdvantageOps } from './advantage-ops';
import { TaskLadder, type CurriculumSetup } from './curriculum';
import { createLmRun, type LmRun } from './lm-run';
import { lossOptions, policyPasses } from './lm-policy-passes';
import type { PolicyStepLosses } from './policy-step';
import { retainedMetrics, retainedRowLength, type RetainedConfig } from './retained-task';
import type { CompletionScorer } from './reward-model';
import {
  nonFiniteReward,
  packRows,
  responseWidth,
  rollout,
  rolloutLength,
  rolloutMetrics,
  type PackedRows,
  type RolloutRow,
} from './token-rollout';
import type { Metrics } from './trainer';

type Task = TokenTask & { readonly answerChars?: string };

export interface TokenRlSetup {
  /** The policy being trained (with a value head where the algorithm has a critic). */
  policy: LanguageModel;
  /** The frozen reference for the KL term (required when klCoef > 0 is ever used). */
  reference?: LanguageModel;
  /** The character tokenizer of the tiny GPT, or a brought model's (its prompts in its chat
   *  template, its stop ids ending completions). */
  tokenizer: Tokenizer;
  task: Task;
  seed: number;
  /**
   * Move to harder rungs of the task as the pass rate allows: after each update the scheduler sees
   * `reward/accuracy`, and when it moves up, `taskAt(level)` replaces the task from the next update
   * (recorded as a 'curriculum' event).
   */
  curriculum?: CurriculumSetup<Task>;
  /** A learned reward model (src/rl/reward-model.ts); rewardModelWeight > 0 needs one. */
  rewardModel?: CompletionScorer;
  /**
   * A second task to keep (retained-task.ts): ptxCoef > 0 trains on its demonstrations in every
   * optimizer step, retainedEvalPrompts > 0 reports its greedy success after every update.
   */
  retained?: TokenTask;
}

/** The settings every token-RL algorithm has; GrpoConfig and PpoLmConfig extend them. */
export interface TokenRlConfig extends RewardConfig, RetainedConfig {
  promptsPerUpdate: number;
  maxNewTokens: number;
  temperature: number;
  lr: number;
  weightDecay: number;
  maxGradNorm: number;
  clipLow: number;
  clipHigh: number;
  /** Dual clip of the policy loss for A < 0; 0 (or absent) is off. */
  dualClip?: number;
  lossAggregation: LossAggMode;
  entropyCoef: number;
  klCoef: number;
  klEstimator: KlEstimator;
  /** Leave completions cut at the token limit out of the loss (TRL mask_truncated_completions). */
  maskTruncated?: boolean;
}

/** A token-RL run: the shared outside (lm-run.ts), its setup, its task's rungs, its ops. */
export interface TokenRlRun<C extends TokenRlConfig, S extends string> extends LmRun<C, S> {
  readonly setup: TokenRlSetup;
  readonly ladder: TaskLadder<Task>;
  /** The advantage ops on the policy's backend (kernels on a WebGPU model). */
  readonly ops: AdvantageOps;
}

export function createTokenRlRun<C extends TokenRlConfig, S extends string>(
  setup: TokenRlSetup,
  description: {
    algorithm: string;
    spec: ConfigSpec<C>;
    rules: (config: C) => void;
    initial: C;
    seeds: Readonly<Record<S, number>>;
  },
): TokenRlRun<C, S> {
  const ladder = new TaskLadder(setup.task, setup.curriculum);
  const { curriculum } = setup;
  const run = createLmRun({
    ...description,
    ...(curriculum
      ? { curriculum: { scheduler: curriculum.scheduler, afterRestore: () => ladder.sync() } }
      : {}),
  });
  return { ...run, setup, ladder, ops: advantageOps(setup.policy) };
}

/** The rows an algorithm sampled for one update, and what it reports of its sampling. */
export interface Rollout {
  rows: RolloutRow[];
  /** Every generated token, dropped rows included. */
  generated: number;
  /** Reported with the update, trained or skipped (e.g. dynamic_sampling/rounds). */
  metrics: Metrics;
}

/** The packed batch with what step 3 scored: the advantages' inputs. */
export interface ScoredBatch extends PackedRows {
  /** (B, T) the token rewards after the KL in the reward. */
  rewards: Float32Array;
  /** (B, T) the critic's values before the update, 0 off the mask (critic only). */
  oldValues?: Float32Array;
}

export interface Advantages {
  /** (B, T) what the policy loss weighs each token by. */
  advantages: Float32Array;
  /** (B, T) the critic's targets (critic only). */
  returns?: Float32Array;
  /** (B, T) the advantages the inspector shows, where they differ (PPO's before whitening). */
  shown?: Float32Array;
  /** The algorithm's own metrics of them. */
  metrics: Metrics;
}

/** What an algorithm supplies to the shared update; everything else is tokenRlUpdate's. */
export interface TokenRlParts<C> {
  /** 1. Sample and score this update's rows, each `rowLength` tokens long. */
  rollout(cfg: C, rowLength: number): Promise<Rollout>;
  /** Where a KL to the reference goes: subtracted from the token rewards, or a loss term. */
  klPenalty(cfg: C): 'reward' | 'loss';
  /** A critic (the policy's value head): its values are scored, its clipped loss is trained. */
  critic?(cfg: C): { coef: number; cliprangeValue: number };
  /** 4. The per-token advantages. */
  advantages(cfg: C, batch: ScoredBatch): Promise<Advantages>;
  /** 5. The passes over the batch; `shuffle` draws each epoch's minibatch order. */
  passes(cfg: C): {
    epochs: number;
    minibatches: number;
    shuffle?: () => number;
    targetKl?: number;
  };
  /** The last step's loss terms as the algorithm reports them (beyond the shared ones). */
  lossMetrics(losses: PolicyStepLosses): Metrics;
  /** Keep the last step's log-probs (the inspector's ratios). */
  keepLogp?: boolean;
}

/** An update's metrics, and the arrays the inspector shows when it trained. */
export interface TokenRlUpdate {
  metrics: Metrics;
  trained?: {
    rows: RolloutRow[];
    batch: ScoredBatch;
    advantages: Advantages;
    /** (B, T) the behaviour policy's log-probs; the last step's (keepLogp). */
    oldLogp?: Float32Array;
    lastLogp?: Float32Array;
    epochsRun: number;
  };
}

/** Generates and scores completions of `samples` (one row each), seeded by the update and round. */
export function generateRows<C extends TokenRlConfig>(
  run: TokenRlRun<C, string>,
  cfg: C,
  samples: TokenTaskSample[],
  rowLength: number,
  at: { round: number; sampling: SampleOptions },
): Promise<RolloutRow[]> {
  const { setup } = run;
  return rollout({
    policy: setup.policy,
    tokenizer: setup.tokenizer,
    task: run.ladder.task,
    rewards: cfg,
    samples,
    maxLength: rowLength,
    maxNewTokens: cfg.maxNewTokens,
    sampling: at.sampling,
    ...(setup.rewardModel ? { rewardModel: setup.rewardModel } : {}),
    seed: counterHash(setup.seed, run.control.step, at.round),
  });
}

export async function tokenRlUpdate<C extends TokenRlConfig>(
  run: TokenRlRun<C, string>,
  parts: TokenRlParts<C>,
): Promise<TokenRlUpdate> {
  const { control, setup, ops, ladder } = run;
  const { policy, tokenizer, reference } = setup;
  const cfg = control.beginUpdate();
  control.phase('generating');
  if (cfg.klCoef > 0 && !reference) {
    throw new Error(`${run.algorithm}: klCoef > 0 needs a reference model in the setup`);
  }
  const started = performance.now();
  // One length for every round, so rounds can be joined: the longest prompt the task makes.
  const rowLength = rolloutLength(policy.spec.context, ladder.task, cfg.maxNewTokens, tokenizer);

  // 1. Rollout.
  const sampled = await parts.rollout(cfg, rowLength);
  const { rows } = sampled;
  control.phase('updating');
  const badReward = nonFiniteReward(rows);
  if (badReward) {
    control.endUpdate({ skipped: badReward });
    return { metrics: { ...rolloutMetrics(rows), ...sampled.metrics } };
  }

  // 2. Token arrays; with a retained task, room for its demonstrations, which join these rows in
  //    the loss (the extra columns are masked out).
  const width = Math.max(rowLength, setup.retained ? retainedRowLength(setup.retained) : 0) - 1;
  const packed = packRows(rows, { maskTruncated: cfg.maskTruncated ?? false, width });
  const { rows: B, seq: T, mask } = packed;

  // 3. Scores before the update, and the KL in the reward.
  const score = (model: LanguageModel) =>
    model.scoreTokens(packed.tokens, packed.targets, B, T, cfg.temperature);
  const refLogp = cfg.klCoef > 0 ? (await score(reference!)).logp : undefined;
  const klInReward = refLogp !== undefined && parts.klPenalty(cfg) === 'reward';
  const critic = parts.critic?.(cfg);
  let oldLogp: Float32Array | undefined;
  let oldValues: Float32Array | undefined;
  if (critic || klInReward) {
    const old = await score(policy);
    oldLogp = old.logp;
    // values · mask: padding and prompt positions carry no value (verl masks them the same way).
    if (critic) oldValues = old.values!.map((v, i) => (mask[i] === 1 ? v : 0));
  }
  let rewards = packed.tokenRewards;
  let rewardKl: number | undefined;
  if (klInReward) {
    const kl = await ops.perTokenKl(oldLogp!, refLogp, mask, B, T, { estimator: cfg.klEstimator });
    const penalized = await ops.klRewardPenalty(rewards, kl.kl, mask, B, T, cfg.klCoef);
    rewards = penalized.rewards;
    rewardKl = penalized.klMean;
  }
  const batch: ScoredBatch = { ...packed, rewards, ...(oldValues ? { oldValues } : {}) };

  // 4. Advantages.
  const advantages = await parts.advantages(cfg, batch);

  // 5. Epochs × minibatches of policy steps, against the behaviour policy's log-probs. The
  //    rollout's own width sets the loss's normalization, also for rows widened for ptx.
  const passes = await policyPasses({
    policy,
    cfg,
    seq: T,
    arrays: {
      tokens: packed.tokens,
      targets: packed.targets,
      mask,
      advantages: advantages.advantages,
      ...(oldLogp ? { oldLogp } : {}),
      ...(refLogp && !klInReward ? { refLogp } : {}),
      ...(oldValues ? { oldValues, returns: advantages.returns! } : {}),
    },
    loss: lossOptions(cfg, responseWidth(ladder.task, cfg.maxNewTokens, rowLength - 1)),
    ...(critic ? { critic } : {}),
    ...parts.passes(cfg),
    ptx: { retained: setup.retained, tokenizer, seed: setup.seed, step: control.step },
    keepLogp: parts.keepLogp ?? false,
  });
  const { lastLosses, lastLogp, epochsRun } = passes;
  let { skipped } = passes;
  const steps = await policy.takeMetrics();
  const lastStep = steps[steps.length - 1];
  if (lastStep && !lastStep.applied) skipped ??= 'non-finite gradient norm';
  control.endUpdate(skipped ? { skipped } : {});

  // 6. Metrics. Tokens/s counts the rollout and the update, not the retained-task check.
  const seconds = (performance.now() - started) / 1000;
  const summary = rolloutMetrics(rows);
  const metrics: Metrics = {
    ...summary,
    ...ladder.observe(summary['reward/accuracy']!, control.step, control.events),
    ...sampled.metrics,
    ...advantages.metrics,
    ...(rewardKl === undefined ? {} : { 'actor/reward_kl_penalty': rewardKl }),
    ...(lastLosses?.ptxLoss === undefined ? {} : { 'actor/ptx_loss': lastLosses.ptxLoss }),
    ...(lastLosses
      ? {
          'actor/pg_loss': lastLosses.pgLoss,
          'actor/pg_clipfrac': lastLosses.pgStats.pg_clipfrac,
          'actor/ppo_kl': lastLosses.pgStats.ppo_kl,
          'actor/entropy': lastLosses.entropy,
          ...parts.lossMetrics(lastLosses),
        }
      : {}),
    ...(await retainedMetrics(policy, tokenizer, setup.retained, cfg)),
    'actor/grad_norm': lastStep?.gradNorm ?? NaN,
    'actor/lr': cfg.lr,
    'perf/generated_tokens': sampled.generated,
    'perf/tokens_per_s': sampled.generated / seconds,
  };
  return {
    metrics,
    trained: {
      rows,
      batch,
      advantages,
      ...(passes.oldLogp ? { oldLogp: passes.oldLogp } : {}),
      ...(lastLogp ? { lastLogp } : {}),
      epochsRun,
    },
  };
}
