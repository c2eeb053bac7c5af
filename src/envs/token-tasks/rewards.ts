/**
 * The reward of one completion of a token task, built the way verl and TRL build it: the
 * verifier's 0/1 score plus optional shaping terms, each with its weight, all reported separately
 * so a run can chart which term moved.
 *
 *   total = correctWeight · verify(y)                       accuracy (TRL: accuracy_reward)
 *         + formatWeight  · format(y)                       1 if y ended with <eos> before the
 *                                                         limit and uses only answer characters
 *         − lengthPenalty · max(0, |y| − lengthTarget)      per token beyond a target
 *         + lengthBonus   · |y|                             per token written (see below)
 *         + overlongPenaltyFactor · R_overlong(|y|)         DAPO soft overlong punishment
 *         + rewardModelWeight · r_φ(x, y)                   a learned reward model's score
 *                                                         (src/rl/reward-model.ts; added by the
 *                                                         rollout, only in runs that trained one)
 *
 * Two settings exist to be misused, for the reward-engineering lesson: `lengthBonus` stands in for
 * a learned reward model that prefers long answers, and `verifierMatch: 'prefix'` is a flawed
 * verifier that reads only the first |answer| characters (an unanchored pattern match), so
 * whatever follows a right answer goes unpunished. Together they are gamed within a few updates.
 * `reward/strict_accuracy` always reports the full verifier, so the gap stays visible.
 *
 * DAPO (Yu et al. 2025, eq. 13), with L_max = overlongMaxLength and L_cache = overlongBuffer:
 *
 *   R_overlong(|y|) = 0                                  if |y| ≤ L_max − L_cache
 *                   = ((L_max − L_cache) − |y|) / L_cache if L_max − L_cache < |y| ≤ L_max
 *                   = −1                                 if |y| > L_max
 *
 * verl v0.9: reward.reward_kwargs.overlong_buffer_cfg.{enable, len = L_cache, penalty_factor}, max_resp_len
 * = L_max, dapo reward manager (older verl: reward_model.overlong_buffer.*); TRL:
 * get_soft_overlong_punishment(max_completion_len, soft_punish_cache).
 *
 * |y| counts generated tokens including the closing <eos> (verl's valid response length). A
 * completion that hit the token limit without <eos> is "truncated": it fails the format term,
 * and trainers may leave it out of the loss (DAPO's overlong filtering) using the flag.
 *
 * Metrics (summarizeRewards, means over a batch): 'reward/mean', 'reward/correct',
 * 'reward/format', 'reward/length_penalty', 'reward/length_bonus', 'reward/overlong_penalty',
 * 'reward/model' (with a reward model) (each term as added to the total), 'reward/accuracy' (fraction the configured verifier passed),
 * 'reward/strict_accuracy' (fraction the full verifier passed), 'response_length/mean',
 * 'response_length/max', 'response_length/clip_ratio' (fraction truncated, as verl names it).
 */
import type { Tokenizer } from '../../models/tokenizer-api';
import { OpInputError } from '../../ops/errors';
import { checkConfig, type ConfigSpec } from '../../util/hyperparams';
import type { TokenTask, TokenTaskSample } from './types';

export interface RewardConfig {
  /** Weight of the verifier's 0/1 score (the accuracy reward), ≥ 0. Default 1. */
  correctWeight: number;
  /**
   * Weight of the 0/1 format reward, ≥ 0 (TRL: a format function in reward_funcs, weighted by
   * reward_weights). Default 0.
   */
  formatWeight: number;
  /** Penalty per token beyond lengthTarget, ≥ 0 (0 turns it off). Default 0. */
  lengthPenalty: number;
  /** Tokens (with <eos>) a completion may use before lengthPenalty applies, ≥ 0. Default 32. */
  lengthTarget: number;
  /**
   * Reward per generated token, ≥ 0 (0 turns it off): a stand-in for a reward model that likes
   * long answers, to show length hacking. Default 0.
   */
  lengthBonus: number;
  /**
   * 'full': the task's verifier reads the whole answer. 'prefix': a deliberately flawed verifier
   * that reads only the first |reference answer| characters, so text after a right answer is never
   * punished (the reward-hacking lesson). Default 'full'.
   */
  verifierMatch: VerifierMatch;
  /** DAPO overlong shaping on/off (verl: overlong_buffer_cfg.enable). Default false. */
  overlongEnable: boolean;
  /** L_max in tokens, ≥ 1 (verl: reward_kwargs.max_resp_len; TRL: max_completion_len). Default 64. */
  overlongMaxLength: number;
  /**
   * L_cache in tokens, 1 ≤ L_cache ≤ L_max (verl: overlong_buffer_cfg.len; TRL:
   * soft_punish_cache). Default 16.
   */
  overlongBuffer: number;
  /** Scale of the overlong term, ≥ 0 (verl: overlong_buffer_cfg.penalty_factor). Default 1. */
  overlongPenaltyFactor: number;
  /**
   * Weight of a learned reward model's normalized score, ≥ 0 (src/rl/reward-model.ts); only runs
   * that trained one may set it above 0. Default 0.
   */
  rewardModelWeight: number;
}

export const VERIFIER_MATCHES = ['full', 'prefix'] as const;
export type VerifierMatch = (typeof VERIFIER_MATCHES)[number];

export const DEFAULT_REWARD_CONFIG: Readonly<RewardConfig> = Object.freeze({
  correctWeight: 1,
  formatWeight: 0,
  lengthPenalty: 0,
  lengthTarget: 32,
  lengthBonus: 0,
  verifierMatch: 'full',
  overlongEnable: false,
  overlongMaxLength: 64,
  overlongBuffer: 16,
  overlongPenaltyFactor: 1,
  rewardModelWeight: 0,
});

export const REWARD_CONFIG_SPEC: ConfigSpec<RewardConfig> = {
  correctWeight: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: "weight of the verifier's 0/1 score (accuracy reward)",
    framework: 'TRL: reward_weights (accuracy_reward)',
  },
  formatWeight: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'weight of the 0/1 format reward: ended with <eos> before the limit, only answer characters',
    framework: 'TRL: reward_weights (a format reward function)',
  },
  lengthPenalty: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'penalty per token beyond lengthTarget (0 = off)',
  },
  lengthTarget: {
    kind: 'int',
    min: 0,
    max: 4096,
    live: true,
    doc: 'tokens (with <eos>) a completion may use before the length penalty starts',
  },
  lengthBonus: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'reward per generated token (0 = off): stands in for a reward model that likes long answers',
  },
  verifierMatch: {
    kind: 'choice',
    options: VERIFIER_MATCHES,
    live: true,
    doc: "'prefix' is a flawed verifier that reads only the first |answer| characters (gameable)",
  },
  overlongEnable: {
    kind: 'boolean',
    live: true,
    doc: "DAPO's soft overlong punishment on/off",
    framework: 'verl: reward.reward_kwargs.overlong_buffer_cfg.enable',
  },
  overlongMaxLength: {
    kind: 'int',
    min: 1,
    max: 4096,
    live: false,
    doc: 'L_max: longest completion in tokens; beyond it the overlong term is −1',
    framework: 'verl: reward.reward_kwargs.max_resp_len; TRL: max_completion_len',
  },
  overlongBuffer: {
    kind: 'int',
    min: 1,
    max: 4096,
    live: true,
    doc: 'L_cache: the last L_cache tokens before L_max are punished linearly (≤ L_max)',
    framework: 'verl: reward.reward_kwargs.overlong_buffer_cfg.len; TRL: soft_punish_cache',
  },
  overlongPenaltyFactor: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'scale of the overlong term',
    framework: 'verl: reward.reward_kwargs.overlong_buffer_cfg.penalty_factor',
  },
  rewardModelWeight: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: "weight of the learned reward model's normalized score (runs that trained one)",
    framework: 'verl: reward_model.enable; TRL: reward_funcs (a model), reward_weights',
  },
};

/** Validates a full config: every field against REWARD_CONFIG_SPEC, then L_cache ≤ L_max. */
export function checkRewardConfig(config: RewardConfig, scope = 'rewards'): void {
  checkConfig(scope, REWARD_CONFIG_SPEC, config);
  for (const key of Object.keys(REWARD_CONFIG_SPEC) as (keyof RewardConfig)[]) {
    if (config[key] === undefined) throw new OpInputError(scope, key, 'is missing');
  }
  checkRewardRules(config, scope);
}

/**
 * The rule between reward fields that ranges cannot express (L_cache ≤ L_max); trainers whose
 * config includes the reward fields call it on the config a change would produce.
 */
export function checkRewardRules(
  config: Pick<RewardConfig, 'overlongBuffer' | 'overlongMaxLength'>,
  scope = 'rewards',
): void {
  if (config.overlongBuffer > config.overlongMaxLength) {
    throw new OpInputError(
      scope,
      'overlongBuffer',
      `must be ≤ overlongMaxLength = ${config.overlongMaxLength} (L_cache ≤ L_max), got ${config.overlongBuffer}`,
    );
  }
}

/** A generated completion as the reward sees it. */
export interface Completion {
  /** The characters before the first <eos>, special tokens left out: what the verifier reads. */
  text: string;
  /** |y|: generated tokens, the closing <eos> included. */
  length: number;
  /** Stopped at the token limit without <eos>. */
  truncated: boolean;
  /** Special tokens other than the closing <eos> (e.g. a stray <bos>): a format fault. */
  specialTokens: number;
}

/**
 * Reads the generated ids of one row (prompt and padding excluded) up to and including the first
 * stop id (<eos>; a chat model's end of turn). Without one the completion is truncated and every
 * id counts.
 */
export function readCompletion(tokenizer: Tokenizer, ids: ArrayLike<number>): Completion {
  const kept: number[] = [];
  let specialTokens = 0;
  for (let t = 0; t < ids.length; t++) {
    const id = ids[t]!;
    if (tokenizer.stopIds.includes(id))
      return { text: tokenizer.decode(kept), length: t + 1, truncated: false, specialTokens };
    if (tokenizer.isSpecial(id)) specialTokens++;
    else kept.push(id);
  }
  return { text: tokenizer.decode(kept), length: ids.length, truncated: true, specialTokens };
}

/** One completion's reward: the total and each term as added to it. */
export interface RewardBreakdown {
  total: number;
  /** correctWeight · verifier score. */
  correct: number;
  /** formatWeight · format score. */
  format: number;
  /** −lengthPenalty · tokens beyond lengthTarget (≤ 0). */
  lengthPenalty: number;
  /** lengthBonus · tokens written (≥ 0). */
  lengthBonus: number;
  /** overlongPenaltyFactor · R_overlong (≤ 0; 0 when off). */
  overlongPenalty: number;
  /** rewardModelWeight · the reward model's normalized score; only in runs with a reward model. */
  model?: number;
  /** The verifier, as configured (verifierMatch), said 1. */
  verified: boolean;
  /** The full verifier said 1 (equal to `verified` unless verifierMatch is 'prefix'). */
  strictlyVerified: boolean;
  /** The format check passed. */
  wellFormed: boolean;
  truncated: boolean;
  length: number;
}

/**
 * DAPO's soft overlong punishment R_overlong(|y|) ∈ [−1, 0] (unscaled): 0 up to L_max − L_cache,
 * then falling linearly to −1 at L_max, −1 beyond.
 */
export function overlongPenalty(length: number, maxLength: number, buffer: number): number {
  const expected = maxLength - buffer;
  if (length <= expected) return 0;
  if (length <= maxLength) return (expected - length) / buffer;
  return -1;
}

/**
 * The length terms of a reward for `length` generated tokens, as added to the total: the penalty
 * per token beyond lengthTarget (≤ 0), the bonus per token (≥ 0), and DAPO's scaled overlong term
 * (≤ 0; 0 when off).
 */
export function lengthTerms(
  length: number,
  config: RewardConfig,
): { lengthPenalty: number; lengthBonus: number; overlong: number } {
  return {
    lengthPenalty: -config.lengthPenalty * Math.max(0, length - config.lengthTarget),
    lengthBonus: config.lengthBonus * length,
    overlong: config.overlongEnable
      ? config.overlongPenaltyFactor *
        overlongPenalty(length, config.overlongMaxLength, config.overlongBuffer)
      : 0,
  };
}

/** Whether `completion` is well formed: ended with <eos>, no special tokens, only `answerChars`. */
export function isWellFormed(completion: Completion, answerChars?: string): boolean {
  if (completion.truncated || completion.specialTokens > 0) return false;
  if (answerChars === undefined) return true;
  for (const c of completion.text) if (!answerChars.includes(c)) return false;
  return true;
}

/**
 * The verifier's verdict on `text` as configured, and the full verifier's. 'prefix' hands the
 * task's verifier only the first |sample.answer| characters of the text.
 */
// #region verdicts
export function verdicts(
  task: TokenTask,
  sample: TokenTaskSample,
  text: string,
  match: VerifierMatch,
): { verified: boolean; strictlyVerified: boolean } {
  const strictlyVerified = task.verify(sample, text) === 1;
  if (match === 'full') return { verified: strictlyVerified, strictlyVerified };
  const head = text.slice(0, sample.answer.length);
  return { verified: task.verify(sample, head) === 1, strictlyVerified };
}
// #endregion verdicts

/**
 * The reward of `completion` for `sample`. `task.answerChars`, where the task has it (every
 * task in this folder does), bounds the format check's characters. Call checkRewardConfig once
 * when the config is made or changed; this function does not repeat it.
 */
// #region score
export function scoreCompletion(
  task: TokenTask & { readonly answerChars?: string },
  sample: TokenTaskSample,
  completion: Completion,
  config: RewardConfig,
): RewardBreakdown {
  const { verified, strictlyVerified } = verdicts(
    task,
    sample,
    completion.text,
    config.verifierMatch,
  );
  const wellFormed = isWellFormed(completion, task.answerChars);
  const correct = config.correctWeight * (verified ? 1 : 0);
  const format = config.formatWeight * (wellFormed ? 1 : 0);
  const { lengthPenalty, lengthBonus, overlong } = lengthTerms(completion.length, config);
  return {
    total: correct + format + lengthPenalty + lengthBonus + overlong,
    correct,
    format,
    // `+ 0` turns −0 into 0 so that a penalty that is off reads as 0 in metrics and tests.
    // #endregion score
    lengthPenalty: lengthPenalty + 0,
    lengthBonus,
    overlongPenalty: overlong + 0,
    verified,
    strictlyVerified,
    wellFormed,
    truncated: completion.truncated,
    length: completion.length,
  };
}

/** Batch means of the reward terms and response lengths, under verl-style metric names. */
export function summarizeRewards(rewards: readonly RewardBreakdown[]): Record<string, number> {
  const n = rewards.length;
  if (n === 0) throw new OpInputError('summarizeRewards', 'rewards', 'must not be empty');
  const mean = (f: (r: RewardBreakdown) => number): number =>
    rewards.reduce((sum, r) => sum + f(r), 0) / n;
  return {
    'reward/mean': mean((r) => r.total),
    'reward/correct': mean((r) => r.correct),
    'reward/format': mean((r) => r.format),
    'reward/length_penalty': mean((r) => r.lengthPenalty),
    'reward/length_bonus': mean((r) => r.lengthBonus),
    'reward/overlong_penalty': mean((r) => r.overlongPenalty),
    ...(rewards.every((r) => r.model !== undefined)
      ? { 'reward/model': mean((r) => r.model!) }
      : {}),
    'reward/accuracy': mean((r) => (r.verified ? 1 : 0)),
    'reward/strict_accuracy': mean((r) => (r.strictlyVerified ? 1 : 0)),
    'response_length/mean': mean((r) => r.length),
    'response_length/max': rewards.reduce((m, r) => Math.max(m, r.length), 0),
    'response_length/clip_ratio': mean((r) => (r.truncated ? 1 : 0)),
  };
}
