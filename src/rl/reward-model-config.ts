/**
 * The reward model's settings (src/rl/reward-model.ts trains the model): their meaning and ranges,
 * declared once for the CLI, the run files and the lab's form, and their defaults. A module of its
 * own so that the form reaches them without the reward model's training code.
 */
import { checkConfig, type ConfigSpec } from '../util/hyperparams';

export interface RewardModelConfig {
  prompts: number;
  samplesPerPrompt: number;
  labelNoise: number;
  steps: number;
  pairsPerStep: number;
  lr: number;
}

export const REWARD_MODEL_CONFIG_SPEC: ConfigSpec<RewardModelConfig> = {
  prompts: {
    kind: 'int',
    min: 4,
    max: 1024,
    live: false,
    doc: 'Prompts the starting policy answers to make the comparison data',
    framework: 'the size of the preference dataset (TRL RewardTrainer: train_dataset)',
  },
  samplesPerPrompt: {
    kind: 'int',
    min: 2,
    max: 16,
    live: false,
    doc: 'Answers per prompt; right answers are paired with wrong ones of the same prompt',
    framework: 'completions ranked per prompt (InstructGPT: K = 4 to 9)',
  },
  labelNoise: {
    kind: 'number',
    min: 0,
    max: 0.5,
    maxOpen: true,
    live: false,
    doc: 'Chance that a pair is labelled the wrong way round, as human raters disagree',
    framework: 'no setting: the noise of the human labels',
  },
  steps: {
    kind: 'int',
    min: 1,
    max: 2000,
    live: false,
    doc: 'Optimizer steps of the reward model on the pairs',
    framework: 'TRL RewardConfig: max_steps; OpenRLHF train_rm: --max_epochs',
  },
  pairsPerStep: {
    kind: 'int',
    min: 1,
    max: 256,
    live: false,
    doc: 'Pairs per optimizer step (each pair scores two completions)',
    framework: 'TRL: per_device_train_batch_size; OpenRLHF: --train_batch_size',
  },
  lr: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: false,
    doc: 'AdamW learning rate of the reward model',
    framework: 'TRL RewardConfig: learning_rate; OpenRLHF train_rm: --learning_rate',
  },
};

export const DEFAULT_REWARD_MODEL_CONFIG: RewardModelConfig = {
  prompts: 128,
  samplesPerPrompt: 4,
  labelNoise: 0,
  steps: 60,
  pairsPerStep: 32,
  lr: 1e-3,
};

export function checkRewardModelConfig(config: RewardModelConfig): void {
  checkConfig('rewardModel', REWARD_MODEL_CONFIG_SPEC, config);
}
