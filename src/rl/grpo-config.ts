/**
 * GRPO's hyperparameters, declared once with their meaning: the critic-free advantage estimators,
 * the config type, the spec (ranges, live or not, help text, verl/TRL names) that the lab's form,
 * the CLI flags and the trainer's checks are all generated from, and the defaults. The reward's
 * and the retained task's settings are spread in, so they change live like the rest. The
 * algorithm is src/rl/grpo.ts.
 */
import {
  DEFAULT_REWARD_CONFIG,
  REWARD_CONFIG_SPEC,
  type RewardConfig,
} from '../envs/token-tasks/rewards';
import type { StdNormalization } from '../ops/group-advantages';
import type { KlEstimator } from '../ops/kl';
import { LOSS_AGG_MODES, type LossAggMode } from '../ops/loss-aggregation';
import type { ConfigSpec } from '../util/hyperparams';
import {
  DEFAULT_RETAINED_CONFIG,
  RETAINED_CONFIG_SPEC,
  type RetainedConfig,
} from './retained-task';
export const ADVANTAGE_ESTIMATORS = [
  'grpo',
  'rloo',
  'reinforce++',
  'reinforce++-baseline',
] as const;
export type AdvantageEstimator = (typeof ADVANTAGE_ESTIMATORS)[number];

/** GRPO's settings; the reward's (RewardConfig) are among them, so they can change live too. */
export interface GrpoConfig extends RewardConfig, RetainedConfig {
  advantageEstimator: AdvantageEstimator;
  groupSize: number;
  promptsPerUpdate: number;
  maxNewTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  lr: number;
  weightDecay: number;
  maxGradNorm: number;
  clipLow: number;
  clipHigh: number;
  dualClip: number;
  lossAggregation: LossAggMode;
  stdNormalization: StdNormalization;
  klCoef: number;
  klEstimator: KlEstimator;
  klPenalty: 'loss' | 'reward';
  entropyCoef: number;
  iterations: number;
  dynamicSampling: boolean;
  maxGenerationRounds: number;
  maskTruncated: boolean;
}

export const GRPO_CONFIG_SPEC: ConfigSpec<GrpoConfig> = {
  advantageEstimator: {
    kind: 'choice',
    options: ADVANTAGE_ESTIMATORS,
    live: true,
    doc: 'Critic-free advantage: group-normalised (GRPO), leave-one-out (RLOO), or whitened returns (REINFORCE++, optionally group-centred)',
    framework:
      "verl: algorithm.adv_estimator ('grpo', 'rloo', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline')",
  },
  groupSize: {
    kind: 'int',
    min: 2,
    max: 64,
    live: false,
    doc: 'Completions sampled per prompt (G); advantages compare them with each other',
    framework: 'verl: actor_rollout_ref.rollout.n; TRL: num_generations',
  },
  promptsPerUpdate: {
    kind: 'int',
    min: 1,
    max: 256,
    live: true,
    doc: 'Prompts per update; the batch holds promptsPerUpdate × groupSize completions',
    framework: 'verl: data.train_batch_size; TRL: per_device_train_batch_size / num_generations',
  },
  maxNewTokens: {
    kind: 'int',
    min: 1,
    max: 255,
    live: true,
    doc: 'Most tokens generated per completion',
    framework: 'verl: data.max_response_length; TRL: max_completion_length',
  },
  temperature: {
    kind: 'number',
    min: 0,
    max: 4,
    minOpen: true,
    live: true,
    doc: 'Sampling temperature; log-probs for the loss use the same temperature',
    framework: 'verl: rollout.temperature; TRL: temperature',
  },
  topK: {
    kind: 'int',
    min: 0,
    max: 256,
    live: true,
    doc: 'Sample among the k most probable tokens (0 = all)',
    framework: 'verl: rollout.top_k (-1 = all); TRL: top_k',
  },
  topP: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'Nucleus sampling: the smallest set of tokens with this much probability',
    framework: 'verl: rollout.top_p; TRL: top_p',
  },
  lr: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'AdamW learning rate',
    framework: 'verl: actor.optim.lr; TRL: learning_rate',
  },
  weightDecay: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'AdamW decoupled weight decay on weight matrices and embeddings',
    framework: 'verl: actor.optim.weight_decay; TRL: weight_decay',
  },
  maxGradNorm: {
    kind: 'number',
    min: 0,
    max: 1e6,
    live: true,
    doc: 'Clip the global gradient norm to this (0 = no clipping)',
    framework: 'verl: actor.optim.clip_grad; TRL: max_grad_norm',
  },
  clipLow: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    maxOpen: true,
    live: true,
    doc: 'Ratios below 1 − clipLow stop pushing the probability down further (for A < 0)',
    framework: 'verl: actor.clip_ratio_low; TRL: epsilon',
  },
  clipHigh: {
    kind: 'number',
    min: 0,
    max: 10,
    minOpen: true,
    live: true,
    doc: 'Ratios above 1 + clipHigh stop pushing the probability up (A > 0); DAPO raises it to 0.28',
    framework: 'verl: actor.clip_ratio_high; TRL: epsilon_high',
  },
  dualClip: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'Dual clip c > 1 caps the loss of negative-advantage tokens at −c·A (0 = off)',
    framework: 'verl: actor.clip_ratio_c (3); OpenRLHF: dual_clip',
  },
  lossAggregation: {
    kind: 'choice',
    options: LOSS_AGG_MODES,
    live: true,
    doc: 'How per-token losses become one number: length bias lives here',
    framework: "verl: actor.loss_agg_mode; TRL: loss_type ('grpo', 'bnpo', 'dr_grpo', 'dapo')",
  },
  stdNormalization: {
    kind: 'choice',
    options: ['group', 'batch', 'none'],
    live: true,
    doc: "Divide advantages by the group's std ('group'), the batch's, or not at all (Dr. GRPO)",
    framework: 'verl: algorithm.norm_adv_by_std_in_grpo; TRL: scale_rewards',
  },
  klCoef: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'Weight β of the KL to the frozen starting policy, added to the loss (0 = off)',
    framework: 'verl: actor.kl_loss_coef (use_kl_loss); TRL: beta',
  },
  klEstimator: {
    kind: 'choice',
    options: ['k1', 'k2', 'k3'],
    live: true,
    doc: 'KL estimator per token: k1 = log ratio, k2 = ½·(log ratio)², k3 = low-variance',
    framework: "verl: actor.kl_loss_type ('kl', 'mse', 'low_var_kl'); TRL: k3 always",
  },
  klPenalty: {
    kind: 'choice',
    options: ['loss', 'reward'],
    live: true,
    doc: "Where the KL to the reference goes: into the loss, or subtracted from each token's reward",
    framework: 'verl: actor.use_kl_loss vs algorithm.use_kl_in_reward',
  },
  entropyCoef: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'Entropy bonus weight: subtracts coef × entropy from the loss',
    framework: 'verl: actor.entropy_coeff',
  },
  iterations: {
    kind: 'int',
    min: 1,
    max: 16,
    live: true,
    doc: 'Optimizer steps per generated batch (μ), each against the stored old log-probs',
    framework: 'verl: actor.ppo_epochs; TRL: num_iterations',
  },
  dynamicSampling: {
    kind: 'boolean',
    live: true,
    doc: 'DAPO dynamic sampling: drop groups whose rewards are all equal and sample more prompts',
    framework: 'verl: algorithm.filter_groups.enable',
  },
  maxGenerationRounds: {
    kind: 'int',
    min: 1,
    max: 16,
    live: true,
    doc: 'Most generation rounds per update with dynamic sampling (then the batch is topped up)',
    framework: 'verl: none (v0.9 ignores algorithm.filter_groups.max_num_gen_batches)',
  },
  maskTruncated: {
    kind: 'boolean',
    live: true,
    doc: 'Leave completions that hit the token limit without <eos> out of the loss',
    framework: 'TRL: mask_truncated_completions',
  },
  ...REWARD_CONFIG_SPEC,
  ...RETAINED_CONFIG_SPEC,
};

export const DEFAULT_GRPO_CONFIG: GrpoConfig = {
  ...DEFAULT_REWARD_CONFIG,
  ...DEFAULT_RETAINED_CONFIG,
  advantageEstimator: 'grpo',
  groupSize: 8,
  promptsPerUpdate: 8,
  maxNewTokens: 8,
  temperature: 1,
  topK: 0,
  topP: 1,
  lr: 1e-3,
  weightDecay: 0,
  maxGradNorm: 1,
  clipLow: 0.2,
  clipHigh: 0.2,
  dualClip: 0,
  lossAggregation: 'token-mean',
  stdNormalization: 'group',
  klCoef: 0,
  klEstimator: 'k3',
  klPenalty: 'loss',
  entropyCoef: 0,
  iterations: 1,
  dynamicSampling: false,
  maxGenerationRounds: 4,
  maskTruncated: false,
};
