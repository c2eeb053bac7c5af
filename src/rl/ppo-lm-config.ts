/**
 * PPO-on-tokens' hyperparameters, declared once with their meaning: the config type, the spec
 * (ranges, live or not, help text, verl/TRL names) that the lab's form, the CLI flags and the
 * trainer's checks are generated from, and the defaults. The reward's and the retained task's
 * settings are spread in, so they change live like the rest. The algorithm is src/rl/ppo-lm.ts.
 */
import {
  DEFAULT_REWARD_CONFIG,
  REWARD_CONFIG_SPEC,
  type RewardConfig,
} from '../envs/token-tasks/rewards';
import { GAE_MASK_MODES, type GaeMaskMode } from '../ops/gae';
import type { KlEstimator } from '../ops/kl';
import { LOSS_AGG_MODES, type LossAggMode } from '../ops/loss-aggregation';
import type { ConfigSpec } from '../util/hyperparams';
import {
  DEFAULT_RETAINED_CONFIG,
  RETAINED_CONFIG_SPEC,
  type RetainedConfig,
} from './retained-task';

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
