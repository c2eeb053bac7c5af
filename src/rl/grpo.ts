/**
 * GRPO for the transformer on token tasks, one update at a time (verl's GRPO recipe, with TRL's
 * option names alongside). The update's pipeline is the one every token-RL algorithm shares
 * (src/rl/lm-pipeline.ts: rollout, reward shaping, policy steps, metrics); what is GRPO's own is
 * here:
 *   - the rollout: P prompts × G completions (B = P·G rows); with dynamic sampling (DAPO), new
 *     prompts until the batch holds P groups whose rewards differ;
 *   - group-relative advantages: (r − mean_group) / (std_group + ε), or without the std (Dr.
 *     GRPO), RLOO's leave-one-out baseline, or REINFORCE++ (with the ops of the policy's backend,
 *     src/rl/advantage-ops.ts: kernels on a WebGPU model);
 *   - μ iterations over the whole batch, the first against the behaviour policy itself (verl
 *     recomputes old log-probs with the actor), with the KL in the loss or in the reward.
 *
 * Metrics (docs/metrics.md), besides the pipeline's:
 *   reward/std                                     verifier scores of this batch
 *   frac_reward_zero_std                           groups whose G rewards are all equal (no signal)
 *   batch/frac_reward_zero_std                     the same, of the groups trained on
 *   dynamic_sampling/rounds                        generation rounds of this update
 *   actor/pg_clipfrac_lower                        dual-clipped share, last iteration
 *   actor/kl_loss                                  KL to the reference (0 when klCoef = 0)
 *   retained/success_rate                          greedy success on the retained task (retainedEvalPrompts > 0)
 */
import { checkRewardRules } from '../envs/token-tasks/rewards';
import type { TokenTaskSample } from '../envs/token-tasks/types';
import { OpInputError } from '../ops/errors';
import {
  inspectBatch,
  type BatchArrays,
  type InspectedSample,
  type Inspection,
} from './inspection';
import { GRPO_CONFIG_SPEC, type GrpoConfig } from './grpo-config';
import { checkRetained } from './retained-task';
import type { AdvantageOps } from './advantage-ops';
import {
  createTokenRlRun,
  generateRows,
  tokenRlUpdate,
  type Advantages,
  type Rollout,
  type ScoredBatch,
  type TokenRlRun,
  type TokenRlSetup,
} from './lm-pipeline';
import { checkRewardModelWeight } from './reward-model';
import type { RolloutRow } from './token-rollout';
import type { Metrics, Trainer } from './trainer';

export type GrpoSetup = TokenRlSetup;

/** One sampled row of the last update, token by token, for the lab's inspector. */
export type GrpoSample = InspectedSample;

export interface GrpoTrainer extends Trainer<GrpoConfig> {
  /** The last update's rows, grouped (G consecutive entries per prompt); built on first read. */
  readonly lastSamples: readonly GrpoSample[];
}

/** Checks that ranges alone cannot express. */
function checkGrpoRules(config: GrpoConfig, setup: GrpoSetup): void {
  checkRewardModelWeight(config, setup.rewardModel, 'grpo');
  checkRetained(config, setup.retained, setup.policy.spec.context, 'grpo');
  if (config.dualClip !== 0 && config.dualClip <= 1) {
    throw new OpInputError('grpo', 'dualClip', `must be 0 (off) or > 1, got ${config.dualClip}`);
  }
  checkRewardRules(config, 'grpo');
}

type GrpoRun = TokenRlRun<GrpoConfig, 'prompts'>;

export function createGrpoTrainer(setup: GrpoSetup, initial: GrpoConfig): GrpoTrainer {
  const run: GrpoRun = createTokenRlRun(setup, {
    algorithm: 'grpo',
    spec: GRPO_CONFIG_SPEC,
    rules: (config: GrpoConfig) => checkGrpoRules(config, setup),
    initial,
    seeds: { prompts: setup.seed },
  });
  const { control, ops } = run;
  // The last update's arrays; lastSamples turns them into per-token records when read.
  let lastBatch: BatchArrays | undefined;
  let lastSamples: GrpoSample[] | undefined;

  async function update(): Promise<Metrics> {
    const { metrics, trained } = await tokenRlUpdate(run, {
      rollout: (cfg, rowLength) => groupRollout(run, cfg, rowLength),
      klPenalty: (cfg) => cfg.klPenalty,
      advantages: (cfg, batch) => groupAdvantages(ops, cfg, batch),
      passes: (cfg) => ({ epochs: cfg.iterations, minibatches: 1 }),
      lossMetrics: (losses) => ({
        'actor/pg_clipfrac_lower': losses.pgStats.pg_clipfrac_lower,
        'actor/kl_loss': losses.klLoss,
      }),
      keepLogp: true,
    });
    if (!trained) return metrics;
    const cfg = control.config;
    const { batch } = trained;
    const B = batch.rows;
    const T = batch.seq;
    lastSamples = undefined;
    lastBatch = {
      rows: trained.rows,
      groupSize: cfg.groupSize,
      seq: T,
      targets: batch.targets,
      mask: batch.mask,
      advantages: trained.advantages.advantages,
      logp: trained.lastLogp ?? trained.oldLogp ?? new Float32Array(B * T),
      oldLogp: trained.oldLogp ?? new Float32Array(B * T),
      clip: {
        clipLow: cfg.clipLow,
        clipHigh: cfg.clipHigh,
        dualClip: cfg.dualClip > 1 ? cfg.dualClip : null,
      },
    };
    return { ...metrics, 'reward/std': std(trained.rows.map((r) => r.reward.total)) };
  }

  return run.expose<GrpoTrainer>({
    get lastSamples() {
      lastSamples ??= lastBatch ? inspectBatch(setup.tokenizer, lastBatch) : [];
      return lastSamples;
    },
    inspect(): Inspection | undefined {
      if (!lastBatch) return undefined;
      lastSamples ??= inspectBatch(setup.tokenizer, lastBatch);
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
  });
}

interface Group {
  rows: RolloutRow[];
  /** Every completion got the same reward: no learning signal (TRL frac_reward_zero_std). */
  zeroStd: boolean;
}

/**
 * P groups of G completions. With dynamic sampling (DAPO), groups whose rewards are all equal
 * carry no signal: keep sampling new prompts until the batch is full of informative groups, and
 * top it up with uninformative ones when the rounds run out (their advantages are 0).
 */
// #region rollout
async function groupRollout(run: GrpoRun, cfg: GrpoConfig, rowLength: number): Promise<Rollout> {
  const sampling = { temperature: cfg.temperature, topK: cfg.topK, topP: cfg.topP };
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
    const samples: TokenTaskSample[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const sample = run.ladder.task.sample(run.streams.get('prompts'));
      for (let g = 0; g < cfg.groupSize; g++) samples.push(sample);
    }
    const rows = await generateRows(run, cfg, samples, rowLength, { round: rounds, sampling });
    rounds += 1;
    const groups: Group[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const group = rows.slice(p * cfg.groupSize, (p + 1) * cfg.groupSize);
      const first = group[0]!.reward.total;
      groups.push({ rows: group, zeroStd: group.every((r) => r.reward.total === first) });
    }
    generated += rows.reduce((n, r) => n + r.completion.length, 0);
    seenGroups += groups.length;
    zeroStdGroups += groups.filter((g) => g.zeroStd).length;
    if (cfg.dynamicSampling) {
      kept.push(...groups.filter((g) => !g.zeroStd));
      spare.push(...groups.filter((g) => g.zeroStd));
    } else kept = groups;
  }
  kept = [...kept, ...spare].slice(0, cfg.promptsPerUpdate);
  return {
    rows: kept.flatMap((g) => g.rows),
    generated,
    metrics: {
      frac_reward_zero_std: zeroStdGroups / seenGroups,
      'dynamic_sampling/rounds': rounds,
    },
  };
}
// #endregion rollout

/** Per-token advantages (B, T) by the configured estimator, and the batch's zero-std fraction. */
async function groupAdvantages(
  ops: AdvantageOps,
  cfg: GrpoConfig,
  batch: ScoredBatch,
): Promise<Advantages> {
  const { rewards, mask, rows, seq } = batch;
  const G = cfg.groupSize;
  const scores = await ops.sumOverTokens(rewards, rows, seq);
  const grouped =
    cfg.advantageEstimator === 'rloo'
      ? await ops.rlooAdvantages(scores, G)
      : await ops.groupAdvantages(scores, G, { stdNormalization: cfg.stdNormalization });
  const metrics = { 'batch/frac_reward_zero_std': grouped.stats.fracRewardZeroStd };
  switch (cfg.advantageEstimator) {
    case 'grpo':
    case 'rloo': {
      const advantages = await ops.broadcastToTokens(grouped.advantages, mask, rows, seq);
      return { advantages, metrics };
    }
    case 'reinforce++': {
      const out = await ops.reinforcePlusPlus(rewards, mask, rows, seq, { gamma: 1 });
      return { advantages: out.advantages, metrics };
    }
    case 'reinforce++-baseline': {
      const out = await ops.reinforcePlusPlusBaseline(rewards, mask, rows, seq, G);
      return { advantages: out.advantages, metrics };
    }
  }
}

function std(values: readonly number[]): number {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  return Math.sqrt(values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length);
}
