/**
 * Rollouts on a token task, shared by the LM trainers (GRPO family, PPO, DPO): generate completions
 * for given prompts, read and score each one, and pack rows into the (B, T) arrays a step trains on.
 *
 *   row: <bos> prompt completion <pad>…      (length L)
 *   tokens = row[0 … L−2], targets = row[1 … L−1], mask = 1 where the target was generated,
 *   tokenRewards = the row's reward on its last generated target (where verl places the score).
 *
 * An agent task (src/agents/) rolls out as multi-turn episodes instead: the row then also holds
 * observation tokens (tool results) with mask 0, so everything downstream trains on the policy's
 * own tokens only.
 */
import {
  readCompletion,
  scoreCompletion,
  summarizeRewards,
  type Completion,
  type RewardBreakdown,
  type RewardConfig,
} from '../envs/token-tasks/rewards';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import { isAgentTask } from '../agents/agent-task';
import {
  scoreEpisode,
  summarizeEpisodes,
  type AgentRewardBreakdown,
} from '../agents/agent-rewards';
import { runAgentEpisodes } from '../agents/agent-episodes';
import { episodeTranscript, type Episode } from '../agents/episode';
import type { LanguageModel } from '../models/language-model';
import type { Tokenizer } from '../models/tokenizer-api';
import type { SampleOptions } from '../ops/nn/sample';
import { promptLengthBound, promptTokens } from '../agents/prompt-tokens';
import type { CompletionScorer } from './reward-model';

export interface RolloutRow {
  sample: TokenTaskSample;
  tokens: Int32Array; // (L) prompt, completion, padding
  mask: Float32Array; // (L) 1 at generated tokens
  completion: Completion;
  reward: RewardBreakdown;
  /** Agent tasks: the episode (turns, calls, segments) and the reward with its tool terms. */
  episode?: Episode;
  agentReward?: AgentRewardBreakdown;
}

export interface RolloutRequest {
  policy: LanguageModel;
  tokenizer: Tokenizer;
  task: TokenTask & { readonly answerChars?: string };
  rewards: RewardConfig;
  /** One entry per row (repeat a sample for several completions of one prompt). */
  samples: readonly TokenTaskSample[];
  /** Row length L (the same for every call of a trainer, so rounds can be joined). */
  maxLength: number;
  /** Most generated tokens per completion (agent tasks: per model turn). */
  maxNewTokens: number;
  sampling: SampleOptions;
  seed: number;
  /**
   * A learned reward model: each row's reward gains rewardModelWeight × its score (the `model`
   * term), scored for every row so that reward/model is charted even at weight 0.
   */
  rewardModel?: CompletionScorer;
}

/**
 * The longest row a task can need: its longest prompt as the tokenizer frames it (<bos> and the
 * characters, or a chat turn), its answer, and the token budget.
 */
export function rolloutLength(
  context: number,
  task: TokenTask,
  maxNewTokens: number,
  tokenizer: Tokenizer,
): number {
  return Math.min(context, promptLengthBound(tokenizer, task) + maxNewTokens);
}

/**
 * The response width the token-sum loss modes divide by (verl: max_response_length; TRL:
 * max_completion_length): the token budget of a single-turn completion; for an agent episode,
 * whose response also holds tool results, the row's T positions.
 */
export function responseWidth(task: TokenTask, maxNewTokens: number, seq: number): number {
  return isAgentTask(task) ? seq : Math.min(maxNewTokens, seq);
}

export async function rollout(request: RolloutRequest): Promise<RolloutRow[]> {
  const rows = await rolloutScoredByRules(request);
  if (!request.rewardModel) return rows;
  const scores = await request.rewardModel.score(rows);
  const weight = request.rewards.rewardModelWeight;
  for (const [b, row] of rows.entries()) {
    const model = weight * scores[b]!;
    row.reward = { ...row.reward, model, total: row.reward.total + model };
    if (row.agentReward) row.agentReward = { ...row.agentReward, model, total: row.reward.total };
  }
  return rows;
}

/** The rollout, each row scored by the verifier and the rule-based terms (no reward model). */
async function rolloutScoredByRules(request: RolloutRequest): Promise<RolloutRow[]> {
  const { tokenizer, task, samples, maxLength } = request;
  if (isAgentTask(task)) {
    const episodes = await runAgentEpisodes({
      op: 'rollout',
      policy: request.policy,
      tokenizer,
      task,
      samples,
      maxLength,
      maxTurnTokens: request.maxNewTokens,
      sampling: request.sampling,
      seed: request.seed,
    });
    return episodes.map((episode) => {
      const reward = scoreEpisode(task, episode, request.rewards);
      return {
        sample: episode.sample,
        tokens: episode.tokens,
        mask: episode.mask,
        completion: {
          text: episodeTranscript(episode),
          length: episode.modelTokens,
          truncated: reward.truncated,
          specialTokens: 0,
        },
        reward,
        episode,
        agentReward: reward,
      };
    });
  }
  const generation = await request.policy.generate({
    prompts: samples.map((s) => promptTokens(tokenizer, s)),
    maxLength,
    maxNewTokens: Math.min(request.maxNewTokens, maxLength - 1),
    stopTokens: tokenizer.stopIds,
    padToken: tokenizer.pad,
    sampling: request.sampling,
    seed: request.seed,
  });
  const L = generation.maxLength;
  return samples.map((sample, b) => {
    const start = b * L + generation.promptLengths[b]!;
    // The generated tokens follow the prompt contiguously: a completion cut at maxNewTokens is
    // that many tokens long, not the rest of the row (its padding is not part of it).
    let generated = 0;
    for (let t = start; t < (b + 1) * L; t++) generated += generation.mask[t]!;
    const completion = readCompletion(
      tokenizer,
      generation.tokens.subarray(start, start + generated),
    );
    return {
      sample,
      tokens: generation.tokens.subarray(b * L, (b + 1) * L),
      mask: generation.mask.subarray(b * L, (b + 1) * L),
      completion,
      reward: scoreCompletion(task, sample, completion, request.rewards),
    };
  });
}

export interface PackedRows {
  rows: number;
  seq: number;
  tokens: Int32Array; // (B, T)
  targets: Int32Array; // (B, T)
  mask: Float32Array; // (B, T)
  tokenRewards: Float32Array; // (B, T)
}

/**
 * Packs rows of length L into (B, T = L − 1) arrays, or into `width` ≥ L − 1 columns with the rest
 * masked out (room for other rows that join the batch, e.g. ptx demonstrations; causal attention
 * keeps the extra columns from changing anything before them). maskTruncated (TRL
 * mask_truncated_completions) leaves completions that never reached <eos> out of the mask.
 */
export function packRows(
  rows: readonly RolloutRow[],
  options: { maskTruncated?: boolean; width?: number } = {},
): PackedRows {
  const B = rows.length;
  const own = (rows[0]?.tokens.length ?? 1) - 1;
  const T = Math.max(own, options.width ?? 0);
  const tokens = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  const mask = new Float32Array(B * T);
  const tokenRewards = new Float32Array(B * T);
  rows.forEach((row, b) => {
    tokens.set(row.tokens.subarray(0, own), b * T);
    targets.set(row.tokens.subarray(1), b * T);
    if (!(options.maskTruncated && row.completion.truncated)) mask.set(row.mask.subarray(1), b * T);
    const last = row.mask.lastIndexOf(1) - 1;
    if (last >= 0) tokenRewards[b * T + last] = row.reward.total;
  });
  return { rows: B, seq: T, tokens, targets, mask, tokenRewards };
}

/** The reward terms, in the order a skip reason looks for the non-finite one. */
const REWARD_TERMS = [
  'correct',
  'format',
  'lengthPenalty',
  'lengthBonus',
  'overlongPenalty',
  'model',
] as const;

/**
 * Why a batch cannot be trained on, if a row's reward is not finite (a reward model that answered
 * NaN, say): the first such row and the term at fault. The advantages of its whole group would be
 * NaN, so the trainers skip the update instead of stopping the run.
 */
export function nonFiniteReward(rows: readonly Pick<RolloutRow, 'reward'>[]): string | undefined {
  for (const [b, { reward }] of rows.entries()) {
    if (Number.isFinite(reward.total)) continue;
    const term = REWARD_TERMS.find((t) => reward[t] !== undefined && !Number.isFinite(reward[t]));
    const what = term
      ? `the '${term}' term of row ${b} is ${reward[term]}`
      : `row ${b}'s total is ${reward.total}`;
    return `non-finite reward: ${what}; update skipped`;
  }
  return undefined;
}

/** Reward and length metrics of a batch of rows, plus the tool-use metrics for agent episodes. */
export function rolloutMetrics(rows: readonly RolloutRow[]): Record<string, number> {
  const rewards = summarizeRewards(rows.map((r) => r.reward));
  if (!rows.every((r) => r.episode && r.agentReward)) return rewards;
  return {
    ...rewards,
    ...summarizeEpisodes(
      rows.map((r) => r.episode!),
      rows.map((r) => r.agentReward!),
    ),
  };
}
