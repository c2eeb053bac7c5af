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
 *   5. epochs × minibatches of policy steps (src/rl/policy-step.ts), each the clipped policy loss
 *      (+ KL in the loss, − entropy bonus, + value loss, + ptx), backward, clip, AdamW; stopped
 *      early when the KL to the behaviour policy passes targetKl;
 *   6. metrics named as verl / TRL name them.
 */
import type { RewardConfig } from '../envs/token-tasks/rewards';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import type { KlEstimator } from '../ops/kl';
import type { LossAggMode } from '../ops/loss-aggregation';
import type { SampleOptions } from '../ops/nn/sample';
import { counterHash } from '../util/counter-rng';
import type { ConfigSpec } from '../util/hyperparams';
import { advantageOps, type AdvantageOps } from './advantage-ops';
import { TaskLadder, type CurriculumSetup } from './curriculum';
import { createLmRun, type LmRun } from './lm-run';
import { policyStep, type PolicyStepLosses, type PolicyStepRequest } from './policy-step';
import { mixPtx, retainedMetrics, retainedRowLength, type RetainedConfig } from './retained-task';
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
  tokenizer: CharTokenizer;
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

/**
 * The policy loss's options and, from them, how every other term is aggregated. verl and TRL
 * normalise the token-sum modes by the response width (max_response_length /
 * max_completion_length), not by the rows' full width, which also holds the prompt.
 */
export function lossOptions(
  cfg: TokenRlConfig,
  width: number,
): Pick<PolicyStepRequest, 'policyLoss' | 'aggregation'> {
  const policyLoss = {
    clipLow: cfg.clipLow,
    clipHigh: cfg.clipHigh,
    dualClip: (cfg.dualClip ?? 0) > 1 ? cfg.dualClip! : null,
    aggregation: cfg.lossAggregation,
    lossScaleFactor: width,
    maxCompletionLength: width,
  };
  const { aggregation: mode, lossScaleFactor, maxCompletionLength } = policyLoss;
  return { policyLoss, aggregation: { mode, lossScaleFactor, maxCompletionLength } };
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
  const rowLength = rolloutLength(policy.config.context, ladder.task, cfg.maxNewTokens);

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
  const passes = parts.passes(cfg);
  const perMinibatch = B / passes.minibatches;
  const loss = lossOptions(cfg, responseWidth(ladder.task, cfg.maxNewTokens, rowLength - 1));
  const all: RowArrays = {
    tokens: packed.tokens,
    targets: packed.targets,
    mask,
    advantages: advantages.advantages,
    ...(refLogp && !klInReward ? { refLogp } : {}),
    ...(oldValues ? { oldValues, returns: advantages.returns! } : {}),
  };
  let lastLosses: PolicyStepLosses | undefined;
  let lastLogp: Float32Array | undefined;
  let skipped: string | undefined;
  let epochsRun = 0;
  epochs: for (let epoch = 0; epoch < passes.epochs; epoch++) {
    const order = passes.shuffle ? permutation(B, passes.shuffle) : undefined;
    let klSum = 0;
    for (let mb = 0; mb < passes.minibatches; mb++) {
      // Without a shuffle there is one minibatch, the whole batch, whose first pass is the
      // behaviour policy (ratio 1) when no old log-probs were scored: they come back from it.
      const part = order
        ? selectRows(order.slice(mb * perMinibatch, (mb + 1) * perMinibatch), T, {
            ...all,
            oldLogp: oldLogp!,
          })
        : { ...all, ...(oldLogp ? { oldLogp } : {}) };
      const n = part.tokens.length / T;
      const ptx = mixPtx(
        setup.retained,
        tokenizer,
        cfg,
        { tokens: part.tokens, targets: part.targets, rows: n, seq: T },
        { seed: setup.seed, step: control.step, key: epoch * passes.minibatches + mb },
      );
      const last = epoch === passes.epochs - 1 && mb === passes.minibatches - 1;
      const step = await policyStep(policy, {
        tokens: ptx?.tokens ?? part.tokens,
        targets: ptx?.targets ?? part.targets,
        rows: n,
        seq: T,
        temperature: cfg.temperature,
        mask: part.mask,
        advantages: part.advantages,
        ...(part.oldLogp ? { oldLogp: part.oldLogp } : {}),
        ...loss,
        ...(part.refLogp
          ? {
              kl: {
                refLogp: part.refLogp,
                coef: cfg.klCoef,
                options: { estimator: cfg.klEstimator },
              },
            }
          : {}),
        entropyCoef: cfg.entropyCoef,
        ...(critic && part.oldValues
          ? {
              value: {
                oldValues: part.oldValues,
                returns: part.returns!,
                coef: critic.coef,
                options: { cliprangeValue: critic.cliprangeValue },
              },
            }
          : {}),
        ...(ptx ? { ptx: { mask: ptx.mask, coef: cfg.ptxCoef } } : {}),
        optimizer: { lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm },
        ...(parts.keepLogp ? { wantLogp: last } : {}),
      });
      if (!order) oldLogp ??= step.logp;
      if (step.logp && last) lastLogp = step.logp;
      if (step.skipped) {
        skipped = step.skipped;
        break epochs;
      }
      lastLosses = step.losses!;
      klSum += lastLosses.pgStats.ppo_kl;
    }
    epochsRun += 1;
    if ((passes.targetKl ?? 0) > 0 && klSum / passes.minibatches > passes.targetKl!) break;
  }
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
      ...(oldLogp ? { oldLogp } : {}),
      ...(lastLogp ? { lastLogp } : {}),
      epochsRun,
    },
  };
}

/** The (B, T) arrays a minibatch takes its rows of. */
interface RowArrays {
  tokens: Int32Array;
  targets: Int32Array;
  mask: Float32Array;
  advantages: Float32Array;
  oldLogp?: Float32Array;
  refLogp?: Float32Array;
  oldValues?: Float32Array;
  returns?: Float32Array;
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

/** The rows `picked` of every (B, T) array, in that order. */
function selectRows(picked: readonly number[], T: number, arrays: RowArrays): RowArrays {
  const take = <A extends Int32Array | Float32Array>(x: A): A => {
    const out = new (x.constructor as new (n: number) => A)(picked.length * T);
    picked.forEach((row, i) => out.set(x.subarray(row * T, (row + 1) * T), i * T));
    return out;
  };
  const out: RowArrays = {
    tokens: take(arrays.tokens),
    targets: take(arrays.targets),
    mask: take(arrays.mask),
    advantages: take(arrays.advantages),
  };
  for (const key of ['oldLogp', 'refLogp', 'oldValues', 'returns'] as const) {
    const x = arrays[key];
    if (x) out[key] = take(x);
  }
  return out;
}
