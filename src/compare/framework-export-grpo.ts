/**
 * GRPO and its estimators (RLOO, REINFORCE++, Dr. GRPO and DAPO settings) → TRL GRPOConfig or
 * RLOOConfig and verl's PPO trainer, as of the releases in src/ops/flavor-releases.ts. One row per
 * setting of src/rl/grpo.ts, in the spec's order.
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
  mapped,
  none,
  num,
  to,
  type FrameworkTable,
  type Mapping,
  type SettingValue,
} from './framework-export-table';
import type { Settings } from './run-record';

const isRloo = (c: Settings) => c.advantageEstimator === 'rloo';

/** A GRPOConfig argument that RLOOConfig does not have: `rloo` says what TRL's RLOO does instead. */
const grpoOnly = (mapping: Mapping, rloo: string | ((v: SettingValue) => string)): Mapping => ({
  names: mapping.names,
  emit: (value, config, field) =>
    isRloo(config)
      ? { none: typeof rloo === 'string' ? rloo : rloo(value) }
      : mapping.emit(value, config, field),
});

const RLOO_LOSS =
  "TRL's RLOO clips one ratio per sequence (the product of its token ratios) and averages over sequences; this lab clips each token's ratio";

export const GRPO_TABLE: FrameworkTable = {
  trl: (c) => {
    if (c.advantageEstimator === 'grpo') return { cls: 'GRPOConfig' };
    if (c.advantageEstimator === 'rloo') return { cls: 'RLOOConfig' };
    return {
      unavailable:
        'TRL has no REINFORCE++ trainer: its GRPO and RLOO trainers estimate advantages from groups',
    };
  },
  verl: { critic: false },
  verlFixed: [],
  trlNotes: [],
  verlNotes: [],
  rows: {
    advantageEstimator: {
      // The trainer class says it (GRPOConfig / RLOOConfig).
      trl: custom([], () => ({ set: [] })),
      verl: choice(
        'algorithm.adv_estimator',
        {
          grpo: 'grpo',
          rloo: 'rloo',
          'reinforce++': 'reinforce_plus_plus',
          'reinforce++-baseline': 'reinforce_plus_plus_baseline',
        },
        'unknown estimator',
      ),
    },
    groupSize: { trl: to('num_generations'), verl: to('actor_rollout_ref.rollout.n') },
    promptsPerUpdate: {
      trl: custom(['per_device_train_batch_size', 'gradient_accumulation_steps'], (v, c) => ({
        set: [
          { name: 'per_device_train_batch_size', value: num(v) * num(c.groupSize) },
          { name: 'gradient_accumulation_steps', value: 1 },
        ],
        note: 'per_device_train_batch_size counts completions (promptsPerUpdate × groupSize) on one process; one optimizer step per generated batch',
      })),
      verl: custom(
        ['data.train_batch_size', 'actor_rollout_ref.actor.ppo_mini_batch_size'],
        (v) => ({
          set: [
            { name: 'data.train_batch_size', value: num(v) },
            { name: 'actor_rollout_ref.actor.ppo_mini_batch_size', value: num(v) },
          ],
          note: 'both count prompts; a mini-batch of the whole batch gives one optimizer step per iteration, as here',
        }),
      ),
    },
    maxNewTokens: { trl: to('max_completion_length'), verl: to('data.max_response_length') },
    temperature: { trl: to('temperature'), verl: to('actor_rollout_ref.rollout.temperature') },
    topK: {
      trl: to('top_k'),
      verl: mapped('actor_rollout_ref.rollout.top_k', (v) => (num(v) === 0 ? -1 : num(v))),
    },
    topP: { trl: to('top_p'), verl: to('actor_rollout_ref.rollout.top_p') },
    lr: { trl: to('learning_rate'), verl: to('actor_rollout_ref.actor.optim.lr') },
    weightDecay: {
      trl: to('weight_decay'),
      verl: to('actor_rollout_ref.actor.optim.weight_decay'),
    },
    maxGradNorm: {
      trl: to('max_grad_norm'),
      verl: verlClip(['actor_rollout_ref.actor.optim.clip_grad']),
    },
    clipLow: { trl: to('epsilon'), verl: to('actor_rollout_ref.actor.clip_ratio_low') },
    clipHigh: { trl: to('epsilon_high'), verl: to('actor_rollout_ref.actor.clip_ratio_high') },
    dualClip: {
      trl: grpoOnly(
        mapped(
          'delta',
          (v) => (num(v) === 0 ? null : num(v)),
          (v, c) =>
            num(v) > 0
              ? `TRL's delta caps the ratio of every token; for negative advantages that is dual clip, and it changes nothing else while delta > 1 + epsilon_high (${1 + num(c.clipHigh)})`
              : undefined,
        ),
        (v) =>
          num(v) === 0
            ? "TRL's RLOO has no dual clip, as this run has none"
            : "TRL's RLOO has no dual clip",
      ),
      verl: mapped('actor_rollout_ref.actor.clip_ratio_c', (v) =>
        num(v) === 0
          ? {
              none: 'verl always applies dual clip to negative advantages (clip_ratio_c, default 3.0, must be > 1); a very large clip_ratio_c makes it inactive',
            }
          : num(v),
      ),
    },
    lossAggregation: {
      trl: grpoOnly(
        choice(
          'loss_type',
          { 'token-mean': 'dapo', 'seq-mean-token-mean': 'grpo', 'dr-grpo': 'dr_grpo' },
          "TRL's loss_type has no sequence-sum mode",
          (v) =>
            v === 'dr-grpo'
              ? "TRL's dr_grpo divides by max_completion_length; this lab's GRPO divides by the whole padded sequence (prompt + completion)"
              : undefined,
        ),
        RLOO_LOSS,
      ),
      verl: VERL_AGG_ROW,
    },
    stdNormalization: {
      trl: custom(['scale_rewards', 'normalize_advantages'], (v, c) =>
        isRloo(c)
          ? {
              set: [{ name: 'normalize_advantages', value: false }],
              note: "this lab's RLOO uses the leave-one-out baseline without a std divisor, whatever stdNormalization says; TRL's normalize_advantages=True would whiten the batch",
            }
          : { set: [{ name: 'scale_rewards', value: v as string }] },
      ),
      verl: choice(
        'algorithm.norm_adv_by_std_in_grpo',
        { group: true, none: false },
        "verl divides by the group's std or not at all; it has no batch std",
      ),
    },
    klCoef: {
      trl: custom(['beta'], (v, c) => {
        if (isRloo(c)) {
          return c.klPenalty === 'reward' && c.klEstimator === 'k1'
            ? {
                set: [{ name: 'beta', value: num(v), float: true }],
                note: "TRL's RLOO subtracts beta × the sequence's summed k1 KL from its reward",
              }
            : num(v) === 0
              ? { set: [{ name: 'beta', value: 0, float: true }] }
              : {
                  none: "TRL's RLOO puts a k1 KL in the reward only (beta); this run uses another KL",
                };
        }
        return c.klPenalty === 'loss'
          ? { set: [{ name: 'beta', value: num(v), float: true }] }
          : {
              none: "TRL's GRPO puts the KL in the loss only (beta); this run subtracts it from the rewards",
            };
      }),
      verl: custom(
        ['actor_rollout_ref.actor.kl_loss_coef', 'algorithm.kl_ctrl.kl_coef'],
        (v, c) => ({
          set: [
            {
              name:
                c.klPenalty === 'loss'
                  ? 'actor_rollout_ref.actor.kl_loss_coef'
                  : 'algorithm.kl_ctrl.kl_coef',
              value: num(v),
              float: true,
            },
          ],
        }),
      ),
    },
    klEstimator: {
      trl: none((v, c) => {
        if (isRloo(c)) return "TRL's RLOO always uses k1 in the reward";
        return v === 'k3'
          ? "TRL's GRPO always uses k3, as this run does"
          : "TRL's GRPO always uses the k3 estimator";
      }),
      verl: custom(['actor_rollout_ref.actor.kl_loss_type', 'algorithm.kl_penalty'], (v, c) => {
        const note = VERL_KL_NOTE(v);
        return {
          set: [
            {
              name:
                c.klPenalty === 'loss'
                  ? 'actor_rollout_ref.actor.kl_loss_type'
                  : 'algorithm.kl_penalty',
              value: VERL_KL[v as keyof typeof VERL_KL],
            },
          ],
          ...(note ? { note } : {}),
        };
      }),
    },
    klPenalty: {
      trl: none((v, c) => {
        if (isRloo(c)) {
          return v === 'reward'
            ? "TRL's RLOO always puts the KL in the reward, as this run does"
            : "TRL's RLOO always puts the KL in the reward";
        }
        return v === 'loss'
          ? "TRL's GRPO always puts the KL in the loss, as this run does"
          : "TRL's GRPO has no KL penalty in the reward";
      }),
      verl: custom(
        ['actor_rollout_ref.actor.use_kl_loss', 'algorithm.use_kl_in_reward'],
        (v, c) => ({
          set: [
            {
              name: 'actor_rollout_ref.actor.use_kl_loss',
              value: v === 'loss' && num(c.klCoef) > 0,
            },
            { name: 'algorithm.use_kl_in_reward', value: v === 'reward' && num(c.klCoef) > 0 },
          ],
        }),
      ),
    },
    entropyCoef: {
      // GRPOConfig.entropy_coef since TRL v1.8: the mean per-token entropy, whatever loss_type.
      trl: grpoOnly(
        to(
          'entropy_coef',
          'TRL adds entropy_coef × the mean per-token entropy whatever loss_type is; this lab aggregates the entropy like the policy loss',
        ),
        (v) =>
          num(v) === 0
            ? "TRL's RLOO has no entropy bonus, as this run has none"
            : "TRL's RLOO has no entropy bonus",
      ),
      verl: to('actor_rollout_ref.actor.entropy_coeff'),
    },
    iterations: { trl: to('num_iterations'), verl: to('actor_rollout_ref.actor.ppo_epochs') },
    dynamicSampling: {
      trl: none('TRL has no dynamic sampling: it trains on every group'),
      // Off: nothing to set (verl's default). On: verl v0.9 refuses to start without the metric;
      // 'acc' is the verifier's 0/1 score, which the exported reward function reports.
      verl: custom(['algorithm.filter_groups.enable', 'algorithm.filter_groups.metric'], (v) =>
        v
          ? {
              set: [
                { name: 'algorithm.filter_groups.enable', value: true },
                { name: 'algorithm.filter_groups.metric', value: 'acc' },
              ],
              note: "verl drops groups whose 'acc' (the verifier's score, from the reward function) is the same for every completion, and samples more prompts until the batch is full",
            }
          : { set: [] },
      ),
    },
    maxGenerationRounds: {
      trl: none('TRL has no dynamic sampling'),
      // verl v0.9 ignores filter_groups.max_num_gen_batches (it only warns): nothing to set.
      verl: custom(
        [],
        (v, c) =>
          c.dynamicSampling
            ? {
                none: 'verl v0.9 has no bound on the generation rounds (it ignores filter_groups.max_num_gen_batches and keeps sampling until the batch is full); this lab stops after this many rounds and tops the batch up with uninformative groups',
              }
            : { set: [] }, // only read with dynamic sampling on
      ),
    },
    maskTruncated: {
      trl: to('mask_truncated_completions'),
      verl: none(
        "verl has no switch to leave truncated completions out of the loss (DAPO's overlong reward shaping is the nearest)",
      ),
    },
    ...REWARD_ROWS,
    ...RETAINED_ROWS,
  },
};
