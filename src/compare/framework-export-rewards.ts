/**
 * How the reward settings (src/envs/token-tasks/rewards.ts, shared by GRPO and PPO) carry over to
 * TRL and verl. Neither framework has reward *settings*: TRL takes reward functions with
 * `reward_weights`, verl a custom reward function (plus the DAPO recipe's overlong buffer). So a
 * reward setting left at its default prints nothing (the verifier alone is what both do with a
 * plain accuracy function), and one that is changed prints what to write instead.
 */
import { DEFAULT_REWARD_CONFIG, type RewardConfig } from '../envs/token-tasks/rewards';
import type { Emitted, FieldRow, Mapping, SettingValue } from './framework-export';
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

/** Only read while DAPO's overlong shaping is on: verl's overlong_buffer key, else nothing. */
function overlongVerl(name: string, float: boolean): Mapping {
  return {
    names: [name],
    emit: (value, config) =>
      config.overlongEnable
        ? { set: [{ name, value: value as number | boolean, float }] }
        : { set: [] },
  };
}

const TRL_WEIGHTS =
  'TRL weighs reward functions with reward_weights, one per function in reward_funcs: list the accuracy and format functions with these weights';
const VERL_FUNCTION =
  "verl's reward is whatever the reward function returns: compute this term in custom_reward_function";
const RECIPE = "verl's DAPO recipe (recipe/dapo) reads reward_model.overlong_buffer";

export const REWARD_ROWS: Record<keyof RewardConfig, FieldRow> = {
  correctWeight: {
    trl: whenChanged('correctWeight', ['reward_weights'], () => ({ set: [], note: TRL_WEIGHTS })),
    verl: whenChanged('correctWeight', [], () => ({ none: VERL_FUNCTION })),
  },
  formatWeight: {
    trl: whenChanged('formatWeight', ['reward_weights'], () => ({ set: [], note: TRL_WEIGHTS })),
    verl: whenChanged('formatWeight', [], () => ({ none: VERL_FUNCTION })),
  },
  lengthPenalty: {
    trl: whenChanged('lengthPenalty', [], () => ({
      none: 'TRL has no per-token length penalty: write it as a reward function',
    })),
    verl: whenChanged('lengthPenalty', [], () => ({ none: VERL_FUNCTION })),
  },
  lengthTarget: {
    // Only meaningful with a length penalty, which carries the note.
    trl: { names: [], emit: () => ({ set: [] }) },
    verl: { names: [], emit: () => ({ set: [] }) },
  },
  lengthBonus: {
    trl: whenChanged('lengthBonus', [], () => ({
      none: "a per-token bonus stands in for a reward model's taste for long answers; TRL has no such setting",
    })),
    verl: whenChanged('lengthBonus', [], () => ({ none: VERL_FUNCTION })),
  },
  verifierMatch: {
    trl: whenChanged('verifierMatch', [], () => ({
      none: "'prefix' is this lab's deliberately flawed verifier, for the reward-hacking lesson",
    })),
    verl: whenChanged('verifierMatch', [], () => ({
      none: "'prefix' is this lab's deliberately flawed verifier, for the reward-hacking lesson",
    })),
  },
  overlongEnable: {
    trl: whenChanged('overlongEnable', [], () => ({
      none: 'TRL: add trl.rewards.get_soft_overlong_punishment(max_completion_len, soft_punish_cache) to reward_funcs',
    })),
    verl: whenChanged('overlongEnable', ['reward_model.overlong_buffer.enable'], (value) => ({
      set: [{ name: 'reward_model.overlong_buffer.enable', value: value as boolean }],
      note: RECIPE,
    })),
  },
  overlongMaxLength: {
    trl: {
      names: ['max_completion_len'],
      emit: (value, config) =>
        config.overlongEnable
          ? { set: [], note: `get_soft_overlong_punishment(max_completion_len=${String(value)})` }
          : { set: [] },
    },
    verl: {
      names: ['data.max_response_length'],
      emit: (value, config) =>
        config.overlongEnable
          ? {
              set: [],
              note: `verl's L_max is data.max_response_length; this run's is ${String(value)}`,
            }
          : { set: [] },
    },
  },
  overlongBuffer: {
    trl: {
      names: ['soft_punish_cache'],
      emit: (value, config) =>
        config.overlongEnable
          ? { set: [], note: `get_soft_overlong_punishment(soft_punish_cache=${String(value)})` }
          : { set: [] },
    },
    verl: overlongVerl('reward_model.overlong_buffer.len', false),
  },
  overlongPenaltyFactor: {
    trl: {
      names: [],
      emit: (value, config) =>
        config.overlongEnable && value !== DEFAULT_REWARD_CONFIG.overlongPenaltyFactor
          ? {
              set: [],
              note: `give the overlong function the weight ${String(value)} in reward_weights`,
            }
          : { set: [] },
    },
    verl: overlongVerl('reward_model.overlong_buffer.penalty_factor', true),
  },
  rewardModelWeight: {
    trl: whenChanged('rewardModelWeight', ['reward_funcs', 'reward_weights'], () => ({
      set: [],
      note: 'TRL: train the reward model with RewardTrainer, pass it (an AutoModelForSequenceClassification with num_labels=1) in reward_funcs, and give it this weight in reward_weights',
    })),
    verl: whenChanged('rewardModelWeight', ['reward_model.enable'], () => ({
      set: [{ name: 'reward_model.enable', value: true }],
      note: 'verl: point reward_model.model.path at the trained reward model; verl adds its score to the rule-based reward, so scale it in the reward model or the reward function',
    })),
  },
};
