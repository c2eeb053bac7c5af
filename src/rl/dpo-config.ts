/**
 * DPO's hyperparameters, declared once with their meaning: the config type, the spec (ranges, live
 * or not, help text, TRL/OpenRLHF names) that the lab's form, the CLI flags and the trainer's
 * checks are generated from, and the defaults. The algorithm is src/rl/dpo.ts.
 */
import { DPO_LOSS_TYPES, type DpoLossType } from '../ops/dpo-loss';
import type { ConfigSpec } from '../util/hyperparams';

export interface DpoConfig {
  beta: number;
  lossType: DpoLossType;
  labelSmoothing: number;
  promptsPerUpdate: number;
  samplesPerPrompt: number;
  temperature: number;
  maxNewTokens: number;
  lr: number;
  maxGradNorm: number;
  weightDecay: number;
}

export const DPO_CONFIG_SPEC: ConfigSpec<DpoConfig> = {
  beta: {
    kind: 'number',
    min: 0,
    max: 100,
    minOpen: true,
    live: true,
    doc: 'β: scale of the implicit reward β·log(π/π_ref); small β lets the policy drift further',
    framework: 'TRL: beta (0.1); OpenRLHF: --beta (0.1)',
  },
  lossType: {
    kind: 'choice',
    options: DPO_LOSS_TYPES,
    live: true,
    doc: "'sigmoid' = DPO's −log σ(β·margin); 'ipo' = squared distance of the margin to 1/(2β)",
    framework: "TRL: loss_type ('sigmoid', 'ipo'); OpenRLHF: --ipo",
  },
  labelSmoothing: {
    kind: 'number',
    min: 0,
    max: 0.5,
    maxOpen: true,
    live: true,
    doc: 'cDPO: assumed chance that a pair is mislabelled (sigmoid loss only)',
    framework: 'TRL: label_smoothing; OpenRLHF: --label_smoothing',
  },
  promptsPerUpdate: {
    kind: 'int',
    min: 1,
    max: 256,
    live: true,
    doc: 'Prompts sampled per update; each gives up to samplesPerPrompt / 2 pairs',
    framework: 'TRL: per_device_train_batch_size (pairs per step there)',
  },
  samplesPerPrompt: {
    kind: 'int',
    min: 2,
    max: 64,
    live: true,
    doc: 'Completions sampled per prompt (K); successes are paired with failures among them',
    framework: 'verl: rollout.n; TRL OnlineDPO: 2 per prompt',
  },
  temperature: {
    kind: 'number',
    min: 0,
    max: 4,
    minOpen: true,
    live: true,
    doc: 'Sampling temperature of the completions (the loss scores the model at temperature 1)',
    framework: 'verl: rollout.temperature; TRL: temperature',
  },
  maxNewTokens: {
    kind: 'int',
    min: 1,
    max: 255,
    live: true,
    doc: 'Most tokens generated per completion',
    framework: 'verl: data.max_response_length; TRL: max_completion_length',
  },
  lr: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'AdamW learning rate',
    framework: 'TRL: learning_rate; OpenRLHF: --learning_rate',
  },
  maxGradNorm: {
    kind: 'number',
    min: 0,
    max: 1e6,
    live: true,
    doc: 'Clip the global gradient norm to this (0 = no clipping)',
    framework: 'TRL: max_grad_norm; OpenRLHF: --max_norm',
  },
  weightDecay: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'AdamW decoupled weight decay on weight matrices and embeddings',
    framework: 'TRL: weight_decay; OpenRLHF: --l2',
  },
};

export const DEFAULT_DPO_CONFIG: DpoConfig = {
  beta: 0.1,
  lossType: 'sigmoid',
  labelSmoothing: 0,
  promptsPerUpdate: 8,
  samplesPerPrompt: 8,
  temperature: 1,
  maxNewTokens: 8,
  lr: 1e-3,
  maxGradNorm: 1,
  weightDecay: 0,
};
