/**
 * PPO's hyperparameters, declared once with their meaning: the config type (a doc comment per field
 * naming CleanRL's equivalent), CleanRL ppo.py's defaults, rl-baselines3-zoo's tuned CartPole
 * settings, and the spec (ranges, live or not, help text, framework names) that the lab's form,
 * the CLI flags and the trainer's checks are all generated from. The algorithm is src/rl/ppo.ts.
 */
import type { ConfigSpec } from '../util/hyperparams';

export interface PpoConfig {
  /** Parallel envs N (CleanRL num_envs). */
  numEnvs: number;
  /** Steps per env per rollout T (CleanRL num_steps); batch = N·T. */
  numSteps: number;
  /** Horizon of the learning-rate annealing, in env steps (CleanRL total_timesteps). */
  totalTimesteps: number;
  /** Adam learning rate (CleanRL learning_rate). */
  learningRate: number;
  /** Anneal the learning rate linearly to 0 over totalTimesteps (CleanRL anneal_lr). */
  annealLr: boolean;
  /** Discount γ (CleanRL gamma). */
  gamma: number;
  /** GAE λ (CleanRL gae_lambda). */
  gaeLambda: number;
  /** Minibatches per epoch (CleanRL num_minibatches); must divide the batch. */
  numMinibatches: number;
  /** Epochs over each batch (CleanRL update_epochs). */
  updateEpochs: number;
  /** Normalise advantages per minibatch (CleanRL norm_adv). */
  normAdv: boolean;
  /** Surrogate clipping ε (CleanRL clip_coef). */
  clipCoef: number;
  /** Clip the value loss too (CleanRL clip_vloss). */
  clipVloss: boolean;
  /** Entropy bonus weight (CleanRL ent_coef). */
  entCoef: number;
  /** Value loss weight (CleanRL vf_coef). */
  vfCoef: number;
  /** Global gradient-norm clip (CleanRL max_grad_norm); 0 = off. */
  maxGradNorm: number;
  /** Stop the epochs when approx_kl exceeds this (CleanRL target_kl); 0 = off (CleanRL None). */
  targetKl: number;
  /** Bootstrap truncated episodes from V(final_obs) (gymnasium semantics); off = CleanRL ppo.py. */
  bootstrapTruncated: boolean;
}

/** CleanRL ppo.py's defaults (CartPole-v1), with truncation bootstrapped. */
export const DEFAULT_PPO_CONFIG: PpoConfig = {
  numEnvs: 4,
  numSteps: 128,
  totalTimesteps: 500_000,
  learningRate: 2.5e-4,
  annealLr: true,
  gamma: 0.99,
  gaeLambda: 0.95,
  numMinibatches: 4,
  updateEpochs: 4,
  normAdv: true,
  clipCoef: 0.2,
  clipVloss: true,
  entCoef: 0.01,
  vfCoef: 0.5,
  maxGradNorm: 0.5,
  targetKl: 0,
  bootstrapTruncated: true,
};

/**
 * rl-baselines3-zoo's tuned PPO settings for CartPole-v1 (hyperparams/ppo.yml: n_envs 8, n_steps
 * 32, batch_size 256, n_epochs 20, gamma 0.98, gae_lambda 0.8, ent_coef 0, learning_rate
 * lin_0.001 over n_timesteps 1e5, clip_range lin_0.2; SB3 clips no value loss). Differences here:
 * the clip range stays 0.2 (no clip annealing in this trainer) and the learning rate stays at
 * its last annealed value after 1e5 steps instead of ending the run.
 */
export const CARTPOLE_TUNED: Readonly<Partial<PpoConfig>> = {
  numEnvs: 8,
  numSteps: 32,
  numMinibatches: 1,
  updateEpochs: 20,
  gamma: 0.98,
  gaeLambda: 0.8,
  entCoef: 0,
  learningRate: 1e-3,
  totalTimesteps: 100_000,
  clipVloss: false,
};

export const PPO_CONFIG_SPEC: ConfigSpec<PpoConfig> = {
  numEnvs: {
    kind: 'int',
    min: 1,
    max: 1024,
    live: false,
    doc: 'environments stepped in parallel; each update collects numEnvs × numSteps steps',
    framework: 'CleanRL: num_envs',
  },
  numSteps: {
    kind: 'int',
    min: 1,
    max: 100000,
    live: false,
    doc: 'steps per environment in each rollout',
    framework: 'CleanRL: num_steps; SB3: n_steps',
  },
  totalTimesteps: {
    kind: 'int',
    min: 1,
    max: 1e9,
    live: false,
    doc: 'env steps over which the learning rate anneals to 0 (must cover at least one update)',
    framework: 'CleanRL: total_timesteps',
  },
  learningRate: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'Adam learning rate (before annealing)',
    framework: 'CleanRL: learning_rate; verl: actor.optim.lr; TRL: learning_rate',
  },
  annealLr: {
    kind: 'boolean',
    live: true,
    doc: 'decay the learning rate linearly to 0 over totalTimesteps',
    framework: 'CleanRL: anneal_lr',
  },
  gamma: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'discount factor',
    framework: 'CleanRL: gamma; verl: algorithm.gamma; TRL: gamma',
  },
  gaeLambda: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'GAE λ: 0 = one-step TD advantage, 1 = Monte Carlo return minus V',
    framework: 'CleanRL: gae_lambda; verl: algorithm.lam; TRL: lam',
  },
  numMinibatches: {
    kind: 'int',
    min: 1,
    max: 65536,
    live: true,
    doc: 'minibatches per epoch; must divide numEnvs × numSteps',
    framework: 'CleanRL: num_minibatches; verl: ppo_mini_batch_size (as a size)',
  },
  updateEpochs: {
    kind: 'int',
    min: 1,
    max: 1000,
    live: true,
    doc: 'passes over each rollout batch',
    framework: 'CleanRL: update_epochs; verl: actor.ppo_epochs; TRL: num_ppo_epochs',
  },
  normAdv: {
    kind: 'boolean',
    live: true,
    doc: 'normalise advantages to mean 0, std 1 within each minibatch',
    framework: 'CleanRL: norm_adv',
  },
  clipCoef: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    maxOpen: true,
    live: true,
    doc: 'surrogate clipping coefficient ε: ratios outside [1 − ε, 1 + ε] stop pulling',
    framework: 'CleanRL: clip_coef; verl: actor.clip_ratio; TRL: cliprange',
  },
  clipVloss: {
    kind: 'boolean',
    live: true,
    doc: 'clip the value loss: the new value may move at most clipCoef from the old one',
    framework: 'CleanRL: clip_vloss (range = clip_coef); verl: critic.cliprange_value',
  },
  entCoef: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'weight of the entropy bonus',
    framework: 'CleanRL: ent_coef; verl: actor.entropy_coeff',
  },
  vfCoef: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'weight of the value loss in the joint loss',
    framework: 'CleanRL: vf_coef; TRL: vf_coef',
  },
  maxGradNorm: {
    kind: 'number',
    min: 0,
    max: 1e6,
    live: true,
    doc: 'clip the global gradient norm (actor and critic together) to this; 0 = off',
    framework: 'CleanRL: max_grad_norm; verl: actor.optim.clip_grad; TRL: max_grad_norm',
  },
  targetKl: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'stop the epochs early once approx_kl exceeds this; 0 = never',
    framework: 'CleanRL: target_kl (None = off)',
  },
  bootstrapTruncated: {
    kind: 'boolean',
    live: true,
    doc: 'bootstrap episodes cut by the time limit from V(final obs); off treats them as terminal (CleanRL ppo.py)',
    framework: 'gymnasium: truncated vs terminated; SB3 handles timeouts this way',
  },
};
