/**
 * Export rows and helpers that GRPO and PPO share: the retained-task settings, verl's gradient
 * clipping, KL estimator names and loss aggregation modes (verl v0.9.0 definitions).
 */
import {
  custom,
  noneWhenOn,
  num,
  type FieldRow,
  type Mapping,
  type SettingValue,
} from './framework-export-table';

const NO_PTX =
  "no supervised (ptx) term in its RL trainers; OpenRLHF's ptx_coef with --pretrain_data is the equivalent";
const RETAINED_EVAL =
  'an evaluation, not a training setting: score the retained task as a validation set';

/** The retained-task settings (src/rl/retained-task.ts), shared by GRPO and PPO. */
export const RETAINED_ROWS: Readonly<Record<string, FieldRow>> = {
  ptxCoef: { trl: noneWhenOn(`TRL has ${NO_PTX}`), verl: noneWhenOn(`verl has ${NO_PTX}`) },
  // Read only with ptxCoef > 0; the ptxCoef line already says there is no equivalent.
  ptxBatch: { trl: custom([], () => ({ set: [] })), verl: custom([], () => ({ set: [] })) },
  retainedEvalPrompts: {
    trl: noneWhenOn(`${RETAINED_EVAL} (eval_dataset with eval_strategy)`),
    verl: noneWhenOn(`${RETAINED_EVAL} (data.val_files with trainer.test_freq)`),
  },
};

const NO_CLIP_VERL =
  'verl always clips the gradient norm (optim.clip_grad); 0 there would scale every gradient to 0 — use a large value to turn clipping off';

/**
 * verl's max gradient norm. Since v0.8 the engines read `optim.clip_grad` (default 1.0);
 * `actor.grad_clip` / `critic.grad_clip` are still declared but nothing reads them.
 */
export const verlClip = (names: readonly string[]): Mapping =>
  custom(names, (v) =>
    num(v) === 0
      ? { none: NO_CLIP_VERL }
      : { set: names.map((name) => ({ name, value: num(v), float: true })) },
  );

/** Our KL estimators → verl's kl_loss_type / kl_penalty names. */
export const VERL_KL = { k1: 'kl', k2: 'mse', k3: 'low_var_kl' } as const;
export const VERL_KL_NOTE = (v: SettingValue) =>
  v === 'k3' ? "verl's low_var_kl clamps each token's estimate to [-10, 10]" : undefined;

const PADDED =
  "this lab's trainers divide by the whole padded sequence (prompt + completion); verl by the response length";

/**
 * verl's agg_loss leaves rows without a trained token out of the row count when it counts the rows
 * itself, as this lab's verl flavor does; its trainer passes the mini-batch's size, every row.
 */
const ROW_COUNT =
  "verl's trainer divides by the mini-batch's row count, rows without a trained token included; this lab's verl flavor leaves those out (as verl's agg_loss does when it counts the rows itself), which differs only when a row has no trained token";

/**
 * Our aggregation → verl's loss_agg_mode. Since February 2026 (v0.7.1) verl's
 * seq-mean-token-sum-norm divides by B · loss_scale_factor, so with loss_scale_factor = the
 * longest response it is Dr. GRPO.
 */
export const VERL_AGG_ROW: FieldRow['verl'] = custom(
  ['actor_rollout_ref.actor.loss_agg_mode', 'actor_rollout_ref.actor.loss_scale_factor'],
  (v, c) => {
    const mode = 'actor_rollout_ref.actor.loss_agg_mode';
    if (v === 'dr-grpo') {
      return {
        set: [
          { name: mode, value: 'seq-mean-token-sum-norm' },
          {
            name: 'actor_rollout_ref.actor.loss_scale_factor',
            value: num(c.maxNewTokens),
          },
        ],
        note: `verl's seq-mean-token-sum-norm divides by B · loss_scale_factor (since v0.7.1): Dr. GRPO with the longest response as the constant; ${PADDED}`,
      };
    }
    const rows = String(v).startsWith('seq-mean-token-sum') ? ROW_COUNT : undefined;
    const note = [v === 'seq-mean-token-sum-norm' ? PADDED : undefined, rows].filter(Boolean);
    return {
      set: [{ name: mode, value: v as string }],
      ...(note.length > 0 ? { note: note.join('; ') } : {}),
    };
  },
);
