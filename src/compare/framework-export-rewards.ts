/**
 * How the reward settings (src/envs/token-tasks/rewards.ts, shared by GRPO and PPO) carry over.
 * Neither framework has reward *settings*: the weights, the format check, the length terms and the
 * flawed 'prefix' verifier are all in the exported reward code (framework-export-reward-code.ts),
 * which both frameworks run. What remains here:
 * - DAPO's overlong term: TRL's get_soft_overlong_punishment among the reward functions (the
 *   script adds it), verl's dapo reward manager with reward.reward_kwargs (v0.9.0 names).
 * - a learned reward model, which both frameworks take as a model of their own.
 */
import { DEFAULT_REWARD_CONFIG, type RewardConfig } from '../envs/token-tasks/rewards';
import type { Emitted, FieldRow, Mapping, SettingValue } from './framework-export-table';
import type { Settings } from './run-record';

/** Nothing to print while `field` is at its default; otherwise `changed` says what to do. */
function whenChanged(
  field: keyof RewardConfig,
  names: readonly string[],
  changed: (value: SettingValue, config: Settings) => Emitted,
): Mapping {
  return {
    names,
    emit: (value, config) =>
      value === DEFAULT_REWARD_CONFIG[field] ? { set: [] } : changed(value, config),
  };
}

/** In the reward code for both frameworks: nothing to set. */
const IN_CODE: FieldRow = {
  trl: { names: [], emit: () => ({ set: [] }) },
  verl: { names: [], emit: () => ({ set: [] }) },
};

const KWARGS = 'reward.reward_kwargs';

/** verl's dapo reward manager reads these (added keys: the trainer config does not declare them). */
function overlongLine(name: string, value: number, config: Settings, float = false): Emitted {
  return config.overlongEnable ? { set: [{ name, value, float, added: true }] } : { set: [] };
}

function overlongVerl(name: string, float = false): Mapping {
  return { names: [name], emit: (v, config) => overlongLine(name, Number(v), config, float) };
}

/** The TRL script passes these to get_soft_overlong_punishment while overlong shaping is on. */
const overlongTrl = (name = ''): Mapping => ({
  names: name ? [name] : [],
  emit: () => ({ set: [] }),
});

export const REWARD_ROWS: Record<keyof RewardConfig, FieldRow> = {
  correctWeight: IN_CODE,
  formatWeight: IN_CODE,
  lengthPenalty: IN_CODE,
  lengthTarget: IN_CODE,
  lengthBonus: IN_CODE,
  verifierMatch: IN_CODE,
  overlongEnable: {
    trl: overlongTrl(),
    verl: {
      names: ['reward.reward_manager.name', `${KWARGS}.overlong_buffer_cfg.enable`],
      emit: (value) =>
        value
          ? {
              set: [
                { name: 'reward.reward_manager.name', value: 'dapo' },
                { name: `${KWARGS}.overlong_buffer_cfg.enable`, value: true, added: true },
              ],
              note: "verl's dapo reward manager adds the overlong penalty to the reward function's score (v0.9.0 reads reward.reward_kwargs; the older reward_model.overlong_buffer keys are gone)",
            }
          : { set: [] },
    },
  },
  overlongMaxLength: {
    trl: overlongTrl('max_completion_len'),
    verl: {
      names: [`${KWARGS}.max_resp_len`],
      emit: (v, config) => {
        const emitted = overlongLine(`${KWARGS}.max_resp_len`, Number(v), config);
        // verl's term keeps falling past max_resp_len (this lab's stops at −1), which only
        // matters when responses may be longer than it.
        const longer = Number(v) < Number(config.maxNewTokens);
        return 'set' in emitted && emitted.set.length > 0 && longer
          ? {
              ...emitted,
              note: `verl's overlong term keeps falling below −1 past max_resp_len (${Number(v)}); this lab's stays at −1 up to maxNewTokens (${Number(config.maxNewTokens)})`,
            }
          : emitted;
      },
    },
  },
  overlongBuffer: {
    trl: overlongTrl('soft_punish_cache'),
    verl: overlongVerl(`${KWARGS}.overlong_buffer_cfg.len`),
  },
  overlongPenaltyFactor: {
    trl: overlongTrl('reward_weights'),
    verl: overlongVerl(`${KWARGS}.overlong_buffer_cfg.penalty_factor`, true),
  },
  rewardModelWeight: {
    trl: whenChanged('rewardModelWeight', ['reward_funcs', 'reward_weights'], () => ({
      set: [],
      note: 'TRL: train the reward model with RewardTrainer, pass it (an AutoModelForSequenceClassification with num_labels=1) in reward_funcs, and give it this weight in reward_weights',
    })),
    verl: whenChanged('rewardModelWeight', ['reward.reward_model.enable'], (_v, c) => ({
      set: [{ name: 'reward.reward_model.enable', value: true }],
      note:
        'verl: REWARD_MODEL_PATH is the trained reward model; verl adds its score to the rule-based reward, so scale it in the reward model or the reward function' +
        (c.dynamicSampling
          ? '; with dynamic sampling verl also needs reward.reward_model.enable_resource_pool=True'
          : ''),
    })),
  },
};
