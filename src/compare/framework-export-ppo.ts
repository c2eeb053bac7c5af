/**
 * PPO on a language model with a value head (src/rl/ppo-lm.ts) → TRL's experimental PPOConfig
 * and verl's PPO trainer with a critic, as of the releases in src/ops/flavor-releases.ts.
 */
import { REWARD_ROWS } from './framework-export-rewards';
import {
  RETAINED_ROWS,
  VERL_AGG_ROW,
  VERL_KL,
  VERL_KL_NOTE,
  verlClip,
} from './framework-export-shared';
import {
  choice,
  custom,
  none,
  noneWhenOn,
  num,
  to,
  toAll,
  type FrameworkTable,
} from './framework-export-table';

export const PPO_TABLE: FrameworkTable = {
  trl: () => ({ cls: 'PPOConfig' }),
  verl: { critic: true },
  verlFixed: [{ name: 'algorithm.adv_estimator', value: 'gae' }],
  trlNotes: [
    "TRL's PPOTrainer takes a separate value model; this lab's critic is a value head on the policy's trunk",
    "TRL's PPOTrainer scores completions with a reward model, not a function: train one (RewardTrainer) on the verifier's scores below",
  ],
  verlNotes: [
    "verl trains the critic as a separate model; this lab's critic is a value head on the policy's trunk",
    'verl also applies dual clip (actor_rollout_ref.actor.clip_ratio_c, default 3.0) to negative advantages; this run does not',
  ],
  rows: {
    promptsPerUpdate: {
      // TRL: rollout batch = per_device_train_batch_size × gradient_accumulation_steps (× processes),
      // then split into num_mini_batches — so the whole batch goes in per_device_train_batch_size.
      trl: custom(['per_device_train_batch_size', 'gradient_accumulation_steps'], (v) => ({
        set: [
          { name: 'per_device_train_batch_size', value: num(v) },
          { name: 'gradient_accumulation_steps', value: 1 },
        ],
        note: "TRL's rollout batch is per_device_train_batch_size × gradient_accumulation_steps (one process) = promptsPerUpdate; num_mini_batches splits it",
      })),
      verl: to('data.train_batch_size'),
    },
    maxNewTokens: { trl: to('response_length'), verl: to('data.max_response_length') },
    temperature: { trl: to('temperature'), verl: to('actor_rollout_ref.rollout.temperature') },
    lr: {
      trl: to('learning_rate'),
      verl: toAll('actor_rollout_ref.actor.optim.lr', 'critic.optim.lr'),
    },
    weightDecay: {
      trl: to('weight_decay'),
      verl: toAll('actor_rollout_ref.actor.optim.weight_decay', 'critic.optim.weight_decay'),
    },
    maxGradNorm: {
      trl: none("TRL's PPOTrainer steps the optimizer without clipping the gradient norm"),
      verl: verlClip(['actor_rollout_ref.actor.optim.clip_grad', 'critic.optim.clip_grad']),
    },
    gamma: { trl: to('gamma'), verl: to('algorithm.gamma') },
    lambda: { trl: to('lam'), verl: to('algorithm.lam') },
    clipLow: { trl: to('cliprange'), verl: to('actor_rollout_ref.actor.clip_ratio_low') },
    clipHigh: {
      trl: custom(['cliprange'], (v, c) =>
        v === c.clipLow
          ? { set: [] } // cliprange (from clipLow) covers both sides
          : { none: `TRL's PPO clips symmetrically (cliprange = clipLow = ${String(c.clipLow)})` },
      ),
      verl: to('actor_rollout_ref.actor.clip_ratio_high'),
    },
    cliprangeValue: { trl: to('cliprange_value'), verl: to('critic.cliprange_value') },
    vfCoef: {
      trl: to('vf_coef'),
      verl: none(
        'verl trains the critic with its own optimizer, so no weight joins the two losses',
      ),
    },
    entropyCoef: {
      trl: none("TRL's PPO has no entropy bonus"),
      verl: to('actor_rollout_ref.actor.entropy_coeff'),
    },
    epochs: {
      trl: to('num_ppo_epochs'),
      verl: toAll('actor_rollout_ref.actor.ppo_epochs', 'critic.ppo_epochs'),
    },
    minibatches: {
      trl: to('num_mini_batches'),
      verl: custom(
        ['actor_rollout_ref.actor.ppo_mini_batch_size', 'critic.ppo_mini_batch_size'],
        (v, c) => ({
          set: ['actor_rollout_ref.actor.ppo_mini_batch_size', 'critic.ppo_mini_batch_size'].map(
            (name) => ({
              name,
              value: num(c.promptsPerUpdate) / num(v),
            }),
          ),
          note: 'ppo_mini_batch_size is a size in prompts: promptsPerUpdate / minibatches',
        }),
      ),
    },
    whitenAdvantages: {
      trl: none((v) =>
        v
          ? "TRL's PPO always whitens advantages, as this run does"
          : "TRL's PPO always whitens advantages",
      ),
      verl: none((v) =>
        v
          ? "verl's GAE always whitens advantages, as this run does"
          : "verl's GAE always whitens advantages",
      ),
    },
    gaeMaskMode: {
      trl: none((v) =>
        v === 'zero-step'
          ? "TRL's PPOTrainer always runs GAE through untrained tokens as zero-reward steps, as this run does"
          : "TRL's PPOTrainer always runs GAE through untrained tokens as zero-reward steps ('zero-step')",
      ),
      verl: none((v) =>
        v === 'skip'
          ? "verl's GAE always skips untrained tokens, as this run does"
          : "verl's GAE always skips untrained tokens ('skip')",
      ),
    },
    targetKl: {
      trl: none("TRL's PPOTrainer has no early stop of the epochs on the KL"),
      verl: none('verl has no early stop of the epochs on the KL'),
    },
    klCoef: {
      trl: to('kl_coef'),
      verl: custom(['algorithm.use_kl_in_reward', 'algorithm.kl_ctrl.kl_coef'], (v) => ({
        set: [
          { name: 'algorithm.use_kl_in_reward', value: num(v) > 0 },
          { name: 'algorithm.kl_ctrl.kl_coef', value: num(v), float: true },
        ],
      })),
    },
    klEstimator: {
      trl: choice(
        'kl_estimator',
        { k1: 'k1', k3: 'k3' },
        "TRL's PPO offers the k1 and k3 estimators only",
      ),
      verl: choice('algorithm.kl_penalty', VERL_KL, 'unknown estimator', VERL_KL_NOTE),
    },
    lossAggregation: {
      trl: none((v) =>
        v === 'token-mean'
          ? "TRL's PPO averages over tokens (token-mean), as this run does"
          : "TRL's PPO always averages over tokens (token-mean)",
      ),
      verl: VERL_AGG_ROW,
    },
    ...REWARD_ROWS,
    overlongEnable: {
      ...REWARD_ROWS.overlongEnable,
      trl: noneWhenOn(
        "TRL's PPOTrainer scores with a reward model and takes no reward functions, so no get_soft_overlong_punishment: put the overlong term into the reward model's training targets",
      ),
    },
    ...RETAINED_ROWS,
  },
};
