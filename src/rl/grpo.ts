/**
 * GRPO for the transformer on token tasks, one update at a time (verl's GRPO recipe, with TRL's
 * option names alongside).
 *
 * One update, top to bottom:
 *   1. sample P prompts from the task and generate G completions for each (B = P·G rows);
 *   2. score each completion with the task's verifier;
 *   3. group-relative advantages: (r − mean_group) / (std_group + ε), or without the std (Dr. GRPO),
 *      with the ops of the policy's backend (src/rl/advantage-ops.ts: kernels on a WebGPU model);
 *   4. recompute old log-probs with the current policy (verl recomputes them with the actor), and
 *      reference log-probs with the frozen initial policy when the KL term is on;
 *   5. μ iterations over the batch, each one policy step (src/rl/policy-step.ts): score →
 *      clipped policy loss (+ β·KL, − entropy bonus, + ptx) → backward → clip → AdamW; on a
 *      WebGPU model the loss runs as kernels next to the log-probs;
 *   6. metrics named as verl / TRL name them.
 *
 * Metrics (docs/metrics.md):
 *   reward/mean, reward/std, reward/success_rate   verifier scores of this batch
 *   frac_reward_zero_std                           groups whose G rewards are all equal (no signal)
 *   response_length/mean                           generated tokens per completion
 *   actor/pg_loss, actor/pg_clipfrac, actor/pg_clipfrac_lower, actor/ppo_kl   last iteration
 *   actor/entropy                                  token-mean entropy of the policy on its samples
 *   actor/kl_loss                                  KL to the reference (0 when klCoef = 0)
 *   actor/grad_norm                                before clipping, last iteration
 *   actor/ptx_loss                                 supervised loss on the retained task's demonstrations (ptxCoef > 0)
 *   retained/success_rate                          greedy success on the retained task (retainedEvalPrompts > 0)
 *   perf/generated_tokens                          tokens generated (dropped groups included)
 *   perf/tokens_per_s                              generated tokens / wall time of the update
 */
import { checkRewardRules } from '../envs/token-tasks/rewards';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import { OpInputError } from '../ops/errors';
import type { CharTokenizer } from '../models/tokenizer';
import { counterHash } from '../util/counter-rng';
import { TaskLadder, type CurriculumSetup } from './curriculum';
import {
  nonFiniteReward,
  packRows,
  responseWidth,
  rollout,
  rolloutLength,
  rolloutMetrics,
  type RolloutRow,
} from './token-rollout';
import { checkConfig, checkPartial } from '../util/hyperparams';
import {
  inspectBatch,
  type BatchArrays,
  type InspectedSample,
  type Inspection,
} from './inspection';
import { GRPO_CONFIG_SPEC, type GrpoConfig } from './grpo-config';
import { checkRetained, mixPtx, retainedRowLength, retainedMetrics } from './retained-task';
import { advantageOps, type AdvantageOps } from './advantage-ops';
import { policyStep } from './policy-step';
import { checkRewardModelWeight, type CompletionScorer } from './reward-model';
import { RunControl, type Metrics, type Trainer } from './trainer';
import { RandomStreams, stateHooks } from './trainer-state';

export interface GrpoSetup {
  /** The policy being trained. */
  policy: LanguageModel;
  /** The frozen reference for the KL term (required when klCoef > 0 is ever used). */
  reference?: LanguageModel;
  tokenizer: CharTokenizer;
  task: TokenTask & { readonly answerChars?: string };
  seed: number;
  /**
   * Move to harder rungs of the task as the pass rate allows: after each update the scheduler sees
   * `reward/accuracy`, and when it moves up, `taskAt(level)` replaces the task from the next update
   * (recorded as a 'curriculum' event).
   */
  curriculum?: CurriculumSetup<TokenTask & { readonly answerChars?: string }>;
  /** A learned reward model (src/rl/reward-model.ts); rewardModelWeight > 0 needs one. */
  rewardModel?: CompletionScorer;
  /**
   * A second task to keep (retained-task.ts): ptxCoef > 0 trains on its demonstrations in every
   * optimizer step, retainedEvalPrompts > 0 reports its greedy success after every update.
   */
  retained?: TokenTask;
}

/** One sampled row of the last update, token by token, for the lab's inspector. */
export type GrpoSample = InspectedSample;

export interface GrpoTrainer extends Trainer<GrpoConfig> {
  /** The last update's rows, grouped (G consecutive entries per prompt); built on first read. */
  readonly lastSamples: readonly GrpoSample[];
}

/** The clip options of the policy loss (dual clip 0 means off). */
function clipOptions(cfg: GrpoConfig) {
  return {
    clipLow: cfg.clipLow,
    clipHigh: cfg.clipHigh,
    dualClip: cfg.dualClip > 1 ? cfg.dualClip : null,
  };
}

/** Checks that ranges alone cannot express. */
function checkGrpoRules(config: GrpoConfig, setup: GrpoSetup): void {
  checkRewardModelWeight(config, setup.rewardModel, 'grpo');
  checkRetained(config, setup.retained, setup.policy.config.context, 'grpo');
  if (config.dualClip !== 0 && config.dualClip <= 1) {
    throw new OpInputError('grpo', 'dualClip', `must be 0 (off) or > 1, got ${config.dualClip}`);
  }
  checkRewardRules(config, 'grpo');
}

export function createGrpoTrainer(setup: GrpoSetup, initial: GrpoConfig): GrpoTrainer {
  checkConfig('grpo', GRPO_CONFIG_SPEC, initial);
  checkGrpoRules(initial, setup);
  const control = new RunControl(initial);
  const { policy, tokenizer, curriculum } = setup;
  const ops = advantageOps(policy);
  const ladder = new TaskLadder(setup.task, curriculum);
  const streams = new RandomStreams({ prompts: setup.seed });
  // The last update's arrays; lastSamples turns them into per-token records when read.
  let lastBatch: BatchArrays | undefined;
  let lastSamples: GrpoSample[] | undefined;

  /** One generation round: P prompts × G completions, scored. */
  async function generateRound(cfg: GrpoConfig, round: number, maxLength: number) {
    const samples: TokenTaskSample[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const sample = ladder.task.sample(streams.get('prompts'));
      for (let g = 0; g < cfg.groupSize; g++) samples.push(sample);
    }
    const rows = await rollout({
      policy,
      tokenizer,
      task: ladder.task,
      rewards: cfg,
      samples,
      maxLength,
      maxNewTokens: cfg.maxNewTokens,
      sampling: { temperature: cfg.temperature, topK: cfg.topK, topP: cfg.topP },
      ...(setup.rewardModel ? { rewardModel: setup.rewardModel } : {}),
      seed: counterHash(setup.seed, control.step, round),
    });
    const groups: Group[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const group = rows.slice(p * cfg.groupSize, (p + 1) * cfg.groupSize);
      const first = group[0]!.reward.total;
      groups.push({ rows: group, zeroStd: group.every((r) => r.reward.total === first) });
    }
    return groups;
  }

  async function update(): Promise<Metrics> {
    const cfg = control.beginUpdate();
    control.phase('generating');
    if (cfg.klCoef > 0 && !setup.reference) {
      throw new Error('grpo: klCoef > 0 needs a reference model in the setup');
    }
    const started = performance.now();
    // One length for every round, so rounds can be joined: the longest prompt the task makes.
    const rolloutRow = rolloutLength(policy.config.context, ladder.task, cfg.maxNewTokens);

    // #region rollout
    // 1. Rollout. With dynamic sampling (DAPO), groups whose rewards are all equal carry no
    //    signal: keep sampling new prompts until the batch is full of informative groups.
    let kept: Group[] = [];
    const spare: Group[] = [];
    let rounds = 0;
    let generated = 0; // every generated token, dropped groups included
    let seenGroups = 0;
    let zeroStdGroups = 0;
    while (
      kept.length < cfg.promptsPerUpdate &&
      rounds < (cfg.dynamicSampling ? cfg.maxGenerationRounds : 1)
    ) {
      const groups = await generateRound(cfg, rounds, rolloutRow);
      rounds += 1;
      generated += groups.reduce(
        (sum, g) => sum + g.rows.reduce((n, r) => n + r.completion.length, 0),
        0,
      );
      seenGroups += groups.length;
      zeroStdGroups += groups.filter((g) => g.zeroStd).length;
      if (cfg.dynamicSampling) {
        kept.push(...groups.filter((g) => !g.zeroStd));
        spare.push(...groups.filter((g) => g.zeroStd));
      } else kept = groups;
    }
    // Topped up with uninformative groups when the rounds ran out (their advantages are 0).
    kept = [...kept, ...spare].slice(0, cfg.promptsPerUpdate);
    // #endregion rollout
    control.phase('updating');
    const rows = kept.flatMap((g) => g.rows);
    const badReward = nonFiniteReward(rows);
    if (badReward) {
      control.endUpdate({ skipped: badReward });
      return { ...rolloutMetrics(rows), 'dynamic_sampling/rounds': rounds };
    }
    const B = rows.length;
    // Inputs are positions 0 … L−2, targets 1 … L−1; with a retained task, room for its
    // demonstrations, which join these rows in the loss (the extra columns are masked out).
    const T = Math.max(rolloutRow, setup.retained ? retainedRowLength(setup.retained) : 0) - 1;

    // 2. Token arrays; the reward sits on the last generated token (as verl places it).
    const { tokens, targets, mask, tokenRewards } = packRows(rows, { ...cfg, width: T });

    // 3. Reference and behaviour log-probs where the KL needs them before the advantages.
    const refLogp =
      cfg.klCoef > 0
        ? (await setup.reference!.scoreTokens(tokens, targets, B, T, cfg.temperature)).logp
        : undefined;
    let oldLogp: Float32Array | undefined;
    let rewardKl: number | undefined;
    let shapedRewards: Float32Array = tokenRewards;
    if (refLogp && cfg.klPenalty === 'reward') {
      oldLogp = (await policy.scoreTokens(tokens, targets, B, T, cfg.temperature)).logp;
      const kl = await ops.perTokenKl(oldLogp, refLogp, mask, B, T, { estimator: cfg.klEstimator });
      const penalized = await ops.klRewardPenalty(tokenRewards, kl.kl, mask, B, T, cfg.klCoef);
      shapedRewards = penalized.rewards;
      rewardKl = penalized.klMean;
    }

    // 4. Advantages (B, T).
    const scores = await ops.sumOverTokens(shapedRewards, B, T);
    const { advantages: tokenAdvantages, fracZeroStd } = await advantagesFor(
      ops,
      cfg,
      shapedRewards,
      scores,
      mask,
      B,
      T,
    );

    // 5. μ optimizer steps against the behaviour policy's log-probs.
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
    let skipped: string | undefined;
    let lastLogp: Float32Array | undefined;
    for (let it = 0; it < cfg.iterations; it++) {
      const ptx = mixPtx(
        setup.retained,
        tokenizer,
        cfg,
        { tokens, targets, rows: B, seq: T },
        { seed: setup.seed, step: control.step, key: it },
      );
      const last = it === cfg.iterations - 1;
      const step = await policyStep(policy, {
        tokens: ptx?.tokens ?? tokens,
        targets: ptx?.targets ?? targets,
        rows: B,
        seq: T,
        temperature: cfg.temperature,
        mask,
        advantages: tokenAdvantages,
        // The first pass is the behaviour policy (ratio 1): its log-probs come back as oldLogp.
        ...(oldLogp ? { oldLogp } : {}),
        policyLoss: {
          ...clipOptions(cfg),
          aggregation: cfg.lossAggregation,
          lossScaleFactor: width,
          maxCompletionLength: width,
        },
        aggregation,
        ...(refLogp && cfg.klPenalty === 'loss'
          ? { kl: { refLogp, coef: cfg.klCoef, options: { estimator: cfg.klEstimator } } }
          : {}),
        entropyCoef: cfg.entropyCoef,
        ...(ptx ? { ptx: { mask: ptx.mask, coef: cfg.ptxCoef } } : {}),
        optimizer: { lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm },
        wantLogp: last,
      });
      oldLogp ??= step.logp;
      if (step.logp && last) lastLogp = step.logp;
      if (step.skipped) {
        skipped = step.skipped;
        break;
      }
      const losses = step.losses!;
      if (losses.ptxLoss !== undefined) lossMetrics['actor/ptx_loss'] = losses.ptxLoss;
      Object.assign(lossMetrics, {
        'actor/pg_loss': losses.pgLoss,
        'actor/pg_clipfrac': losses.pgStats.pg_clipfrac,
        'actor/pg_clipfrac_lower': losses.pgStats.pg_clipfrac_lower,
        'actor/ppo_kl': losses.pgStats.ppo_kl,
        'actor/entropy': losses.entropy,
        'actor/kl_loss': losses.klLoss,
      });
    }
    const steps = await policy.takeMetrics();
    const last = steps[steps.length - 1];
    if (last && !last.applied) skipped ??= 'non-finite gradient norm';
    control.endUpdate(skipped ? { skipped } : {});
    const clip = clipOptions(cfg);
    lastSamples = undefined;
    lastBatch = {
      rows,
      groupSize: cfg.groupSize,
      seq: T,
      targets,
      mask,
      advantages: tokenAdvantages,
      logp: lastLogp ?? oldLogp ?? new Float32Array(B * T),
      oldLogp: oldLogp ?? new Float32Array(B * T),
      clip,
    };

    // 6. Metrics. Tokens/s counts the rollout and the update, not the retained-task check.
    const seconds = (performance.now() - started) / 1000;
    const retained = await retainedMetrics(policy, tokenizer, setup.retained, cfg);
    const rewardSummary = rolloutMetrics(rows);
    const levelMetrics = ladder.observe(
      rewardSummary['reward/accuracy']!,
      control.step,
      control.events,
    );
    return {
      ...rewardSummary,
      ...levelMetrics,
      'reward/std': std(rows.map((r) => r.reward.total)),
      frac_reward_zero_std: zeroStdGroups / seenGroups,
      'batch/frac_reward_zero_std': fracZeroStd,
      'dynamic_sampling/rounds': rounds,
      ...(rewardKl === undefined ? {} : { 'actor/reward_kl_penalty': rewardKl }),
      ...lossMetrics,
      ...retained,
      'actor/grad_norm': last?.gradNorm ?? NaN,
      'actor/lr': cfg.lr,
      'perf/generated_tokens': generated,
      'perf/tokens_per_s': generated / seconds,
    };
  }

  return control.expose({
    algorithm: 'grpo',
    ...stateHooks({
      algorithm: 'grpo',
      control,
      streams,
      checkConfig: (config: GrpoConfig) => {
        checkConfig('grpo', GRPO_CONFIG_SPEC, config);
        checkGrpoRules(config, setup);
      },
      ...(curriculum
        ? { curriculum: curriculum.scheduler, afterRestore: () => ladder.sync() }
        : {}),
    }),
    get lastSamples() {
      lastSamples ??= lastBatch ? inspectBatch(tokenizer, lastBatch) : [];
      return lastSamples;
    },
    inspect(): Inspection | undefined {
      if (!lastBatch) return undefined;
      lastSamples ??= inspectBatch(tokenizer, lastBatch);
      return {
        kind: 'samples',
        algorithm: 'grpo',
        step: control.step,
        groupSize: lastBatch.groupSize,
        has: { ratio: true, value: false },
        samples: lastSamples,
      };
    },
    update,
    setHyperparams(partial: Partial<GrpoConfig>) {
      checkPartial('grpo', GRPO_CONFIG_SPEC, partial, { liveOnly: true });
      checkGrpoRules({ ...control.config, ...partial }, setup);
      control.queue(partial);
    },
  });
}

interface Group {
  rows: RolloutRow[];
  /** Every completion got the same reward: no learning signal (TRL frac_reward_zero_std). */
  zeroStd: boolean;
}

/** Per-token advantages (B, T) by the configured estimator, and the batch's zero-std fraction. */
async function advantagesFor(
  ops: AdvantageOps,
  cfg: GrpoConfig,
  tokenRewards: Float32Array,
  scores: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
): Promise<{ advantages: Float32Array; fracZeroStd: number }> {
  const G = cfg.groupSize;
  const grouped =
    cfg.advantageEstimator === 'rloo'
      ? await ops.rlooAdvantages(scores, G)
      : await ops.groupAdvantages(scores, G, { stdNormalization: cfg.stdNormalization });
  const fracZeroStd = grouped.stats.fracRewardZeroStd;
  switch (cfg.advantageEstimator) {
    case 'grpo':
    case 'rloo': {
      const advantages = await ops.broadcastToTokens(grouped.advantages, mask, rows, cols);
      return { advantages, fracZeroStd };
    }
    case 'reinforce++': {
      const out = await ops.reinforcePlusPlus(tokenRewards, mask, rows, cols, { gamma: 1 });
      return { advantages: out.advantages, fracZeroStd };
    }
    case 'reinforce++-baseline': {
      const out = await ops.reinforcePlusPlusBaseline(tokenRewards, mask, rows, cols, G);
      return { advantages: out.advantages, fracZeroStd };
    }
  }
}

function std(values: readonly number[]): number {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
}
