/**
 * The runs lesson widgets open, declared once: algorithm, environment or task, seed, the settings
 * that differ from the algorithm's defaults, which settings the reader may change, the metric the
 * widget charts, and the check it runs unless the lesson states its own.
 *
 * Defaults are not copied here: buildPresetSpec() fills them from the algorithm's catalog entry
 * (the same metadata the lab's form uses), so a preset stays valid when a default changes.
 */
import type { CurriculumConfig } from '../rl/curriculum';
import type { RewardModelConfig } from '../rl/reward-model';
import {
  copyRetained,
  type RetainedTaskSpec,
  type RunSpec,
  type Settings,
  type StartFrom,
} from '../worker/run-protocol';

export interface LessonPreset {
  title: string;
  algo: string;
  env?: string;
  task?: string;
  seed: number;
  /** Settings that differ from the algorithm's defaults. */
  config: Settings;
  /** Settings the reader may change; everything else is locked. */
  free: readonly string[];
  /** The metric the widget charts first. */
  keyMetric: string;
  /** Metrics charted beside it, when the lesson's point is how two of them part ways. */
  alsoChart?: readonly string[];
  /** The check used when the lesson's directive gives none. */
  check: string;
  /**
   * Language models: the updates within which the check is claimed (measured over seeds 1–5 by
   * `npm run bench:learn -- --only=lessons`); the control runs all of them. Default 30.
   */
  budget?: number;
  backend: 'cpu' | 'auto';
  sftSteps?: number;
  /** Language models: the task's options (a shipped start brings its own). */
  taskOptions?: Settings;
  /** Language models: start from a shipped checkpoint, so RL begins at once. */
  init?: StartFrom;
  /** Language models: train a reward model before RL (RunSpec.rewardModel). */
  rewardModel?: RewardModelConfig;
  /** Language models: train through the task's rungs (RunSpec.curriculum). */
  curriculum?: CurriculumConfig;
  /** Language models: a second task to keep (RunSpec.retained). */
  retained?: RetainedTaskSpec;
  /**
   * Language models: the matched control — the same run, seeds and prompts with learning all but
   * off (lr 1e-9) or the lesson's mechanism off — which must not pass the check. The learning
   * tests and `npm run bench:learn -- --only=lessons` run it beside the preset.
   */
  control?: PresetControl;
  /**
   * Language models: a second control the check must also fail, run as `control` is (e.g. lr
   * 1e-9 beside a lesson whose control takes a mechanism away).
   */
  alsoControl?: PresetControl;
}

export interface PresetControl {
  /** Settings changed from the preset's. */
  config?: Settings;
  /** Task options changed from the preset's (e.g. the tool taken away). */
  taskOptions?: Settings;
  /** What the control switches off, in words. */
  what: string;
}

/** The control of most learning presets: the same run at a learning rate that moves nothing. */
const NO_LEARNING: PresetControl = { config: { lr: 1e-9 }, what: 'lr 1e-9' };

/** The copy task as the shipped copy model was warmed up on it (src/models/shipped-manifest.json). */
const FROM_SHIPPED_COPY = {
  task: 'copy',
  taskOptions: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  init: { kind: 'shipped', model: 'copy' },
  sftSteps: 0,
} as const;

/**
 * The reward-model lesson's start: the shipped copy model on its shorter prompts (3–4 of the 3–6
 * letters it was warmed up on), where it is right often enough to have room to fall.
 */
const FROM_SHIPPED_COPY_SHORT = {
  ...FROM_SHIPPED_COPY,
  taskOptions: { ...FROM_SHIPPED_COPY.taskOptions, maxLength: 4 },
} as const;

/**
 * The learning lessons' copy start (src/models/shipped-manifest.json, 'copy-noisy', with its
 * sampled pass@1 and pass@8): warmed up on demonstrations wholly right 30% of the time, it samples
 * a whole right answer now and then while most groups of 8 hold one — signal, and room to learn.
 */
const FROM_SHIPPED_COPY_NOISY = {
  task: 'copy',
  taskOptions: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  init: { kind: 'shipped', model: 'copy-noisy' },
  sftSteps: 0,
} as const;

/**
 * The forgetting lesson's start (the shipped multiply-recall model, src/models/shipped-manifest.json)
 * as its two runs use it: GRPO on two-digit products with the calculator, and the one-digit
 * products it answers from memory with no tool offered — the other part of its warm-up — kept as
 * the retained task, answered greedily on 32 fixed prompts after every update.
 */
const FROM_SHIPPED_MULTIPLY_RECALL = {
  task: 'multiply',
  taskOptions: { minDigits: 2, maxDigits: 2, useTools: true },
  init: { kind: 'shipped', model: 'multiply-recall' },
  sftSteps: 0,
  retained: { task: 'multiply', taskOptions: { minDigits: 1, maxDigits: 1, useTools: false } },
} as const;

/** The curriculum run's lr and the build's temperature; 32 tokens a turn, the task's budget. */
const CALC_FORGETTING_CONFIG = {
  lr: 3e-4,
  maxNewTokens: 32,
  temperature: 0.85,
  retainedEvalPrompts: 32,
} as const;

/**
 * A reward model trained on the shipped copy model's answers to the 3–4 letters of
 * FROM_SHIPPED_COPY_SHORT: 96 prompts × 4 answers, 30 steps of 8 right/wrong pairs (what it
 * learns: docs/presets.md).
 */
const COPY_REWARD_MODEL: RewardModelConfig = {
  prompts: 96,
  samplesPerPrompt: 4,
  labelNoise: 0,
  steps: 30,
  pairsPerStep: 8,
  lr: 1e-3,
};

/**
 * The reward-hacking lesson's gameable reward: 0.1 per answer token with room for 12, and a
 * verifier that accepts any answer beginning with the right copy, so padding pays.
 */
const GAMEABLE_REWARD = {
  maxNewTokens: 12,
  lengthBonus: 0.1,
  verifierMatch: 'prefix',
} as const;

/** GRPO rewarded by the reward model alone: the verifier's weight 0, the model's 1. */
const REWARD_MODEL_RUN = {
  lr: 1e-3,
  promptsPerUpdate: 16,
  groupSize: 4,
  correctWeight: 0,
  rewardModelWeight: 1,
};

export const PRESETS = {
  'value-iteration-gridworld': {
    title: 'Value iteration on GridWorld',
    algo: 'value-iteration',
    env: 'gridworld',
    seed: 0,
    config: { gamma: 0.9, theta: 1e-6 },
    free: ['gamma', 'theta', 'livingReward'],
    keyMetric: 'values/max_delta',
    check: 'values/converged>=1',
    backend: 'cpu',
  },
  'policy-iteration-4x3': {
    title: 'Policy iteration on the 4×3 world',
    algo: 'policy-iteration',
    env: 'gridworld-4x3',
    seed: 0,
    // AIMA Figure 17.2(a): living reward −0.04, undiscounted.
    config: { gamma: 1, livingReward: -0.04 },
    free: ['livingReward', 'gamma'],
    keyMetric: 'policy/changed_states',
    alsoChart: ['values/mean'],
    check: 'policy/converged>=1',
    backend: 'cpu',
  },
  'q-learning-cliff': {
    title: 'Q-learning on CliffWalking',
    algo: 'q-learning',
    env: 'cliffwalking',
    seed: 1,
    // Sutton & Barto Example 6.6: ε = 0.1, α = 0.5, undiscounted.
    config: { alpha: 0.5, epsilon: 0.1, gamma: 1 },
    free: ['epsilon', 'alpha'],
    keyMetric: 'charts/episodic_return',
    check: 'path<=13',
    backend: 'cpu',
  },
  'sarsa-cliff': {
    title: 'SARSA on CliffWalking',
    algo: 'sarsa',
    env: 'cliffwalking',
    seed: 1,
    config: { alpha: 0.5, epsilon: 0.1, gamma: 1 },
    free: ['epsilon', 'alpha'],
    keyMetric: 'charts/episodic_return',
    check: 'charts/episodic_return>=-40',
    backend: 'cpu',
  },
  'reinforce-bandit-none': {
    title: 'REINFORCE without a baseline on a bandit around +4',
    algo: 'reinforce',
    env: 'bandit-10-plus4',
    seed: 1,
    // No baseline: its gradient variance is what the lesson contrasts (docs/presets.md).
    config: { baseline: 'none', lr: 0.5 },
    free: ['lr', 'batchEpisodes', 'baseline'],
    keyMetric: 'actor/grad_variance',
    check: 'charts/optimal_action_rate>=0.8',
    backend: 'cpu',
  },
  'reinforce-bandit-mean': {
    title: 'REINFORCE with the batch-mean baseline on a bandit around +4',
    algo: 'reinforce',
    env: 'bandit-10-plus4',
    seed: 1,
    // The batch-mean baseline: the same learning at a fraction of the variance (docs/presets.md).
    config: { baseline: 'mean', lr: 0.5 },
    free: ['lr', 'batchEpisodes', 'baseline'],
    keyMetric: 'actor/grad_variance',
    check: 'charts/optimal_action_rate>=0.8',
    backend: 'cpu',
  },
  'ppo-cartpole': {
    title: 'PPO on CartPole',
    algo: 'ppo-mlp',
    env: 'cartpole',
    seed: 3,
    // The algorithm's defaults are rl-baselines3-zoo's tuned CartPole settings (8 envs × 32
    // steps, 20 epochs, γ 0.98, λ 0.8, lr 1e-3, entCoef 0); what they reach: docs/presets.md.
    config: {},
    free: ['learningRate', 'clipCoef', 'entCoef', 'gaeLambda'],
    keyMetric: 'charts/episodic_return',
    check: 'charts/episodic_return>=150',
    backend: 'cpu',
  },
  'grpo-copy': {
    title: 'GRPO on copy, from the shipped noisy-copy checkpoint',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // Two optimizer steps per batch (TRL num_iterations, verl ppo_epochs) so that the clipped
    // ratio matters; 16 prompts, since 8 were too few from this start (docs/presets.md).
    config: { lr: 1.5e-3, iterations: 2, promptsPerUpdate: 16 },
    free: ['lr', 'iterations', 'temperature', 'stdNormalization', 'advantageEstimator'],
    keyMetric: 'reward/accuracy',
    alsoChart: ['frac_reward_zero_std'],
    check: 'reward/accuracy gain>=0.3',
    budget: 60,
    control: NO_LEARNING,
    backend: 'auto',
  },

  'grpo-copy-collapse': {
    title: 'GRPO on copy with a learning rate four times too high',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // Four times grpo-copy's lr turns the policy deterministic: groups come out all right or all
    // wrong and lose their signal, which the check measures (docs/presets.md).
    config: { lr: 4e-3 },
    free: ['lr'],
    keyMetric: 'frac_reward_zero_std',
    alsoChart: ['reward/accuracy'],
    check: 'frac_reward_zero_std gain>=0.3',
    budget: 30,
    control: { config: { lr: 1e-3 }, what: 'lr 1e-3, a quarter of it' },
    backend: 'auto',
  },
  'grpo-copy-drgrpo': {
    title: 'Dr. GRPO on copy: no std divisor, a constant loss normalizer',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // Dr. GRPO: verl norm_adv_by_std_in_grpo=False, TRL scale_rewards='none' and loss_type
    // 'dr_grpo'; grpo-copy's start, lr and batch otherwise (docs/presets.md).
    config: {
      lr: 1.5e-3,
      iterations: 2,
      promptsPerUpdate: 16,
      stdNormalization: 'none',
      lossAggregation: 'dr-grpo',
    },
    free: ['lr', 'stdNormalization', 'lossAggregation'],
    keyMetric: 'reward/accuracy',
    check: 'reward/accuracy gain>=0.3',
    budget: 60,
    control: NO_LEARNING,
    backend: 'auto',
  },

  'grpo-copy-kl': {
    title: 'GRPO on copy at a learning rate that collapses it, held by a KL to the start',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // verl's GRPO KL (use_kl_loss, low_var_kl = k3, kl_loss_coef 3) at a collapsing lr. The check
    // is on entropy, the collapse itself, so that a run without a reference cannot pass; the claim
    // is the difference from the control at update 20 (docs/presets.md).
    config: { lr: 6e-3, klCoef: 3, klEstimator: 'k3', klPenalty: 'loss' },
    free: ['lr', 'klCoef', 'klEstimator'],
    keyMetric: 'actor/entropy',
    alsoChart: ['actor/kl_loss', 'frac_reward_zero_std', 'reward/accuracy'],
    check: 'actor/entropy gain>=0 after 20',
    budget: 25,
    control: { config: { klCoef: 1e-6 }, what: 'klCoef 1e-6: a reference, no pull' },
    backend: 'auto',
  },
  'grpo-copy-gamed-kl': {
    title: 'GRPO on a gameable reward, held to what it did well by a KL to the start',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY,
    seed: 1,
    // grpo-copy-gamed's reward (a length bonus, a prefix verifier) with verl's GRPO KL (k3 in the
    // loss, coefficient 1): the check is on what the KL keeps, strict success, against the same
    // run without it; 16 prompts an update, so that a lucky first batch does not decide it
    // (docs/presets.md).
    config: {
      promptsPerUpdate: 16,
      ...GAMEABLE_REWARD,
      klCoef: 1,
      klEstimator: 'k3',
      klPenalty: 'loss',
    },
    free: ['klCoef', 'lengthBonus', 'lr'],
    keyMetric: 'reward/strict_accuracy',
    alsoChart: ['response_length/clip_ratio', 'actor/kl_loss'],
    check: 'reward/strict_accuracy gain>=-0.1 after 20',
    budget: 25,
    control: { config: { klCoef: 0 }, what: 'klCoef 0: no KL penalty (grpo-copy-gamed)' },
    backend: 'auto',
  },
  'grpo-multiply-tools': {
    title: 'GRPO with a calculator, from the shipped multiply checkpoint',
    algo: 'grpo',
    task: 'multiply',
    // The options the shipped multiply model was warmed up on (src/models/shipped-manifest.json):
    // two-digit factors, the calculator called on half of its demonstrations.
    taskOptions: { minDigits: 2, maxDigits: 2, useTools: true },
    init: { kind: 'shipped', model: 'multiply' },
    sftSteps: 0,
    seed: 1,
    // 32 tokens per turn (the task's budget) and the build's temperature; the check is strict
    // success, the answer exactly right (docs/presets.md).
    config: { lr: 1e-3, maxNewTokens: 32, temperature: 0.85 },
    free: ['lr', 'temperature'],
    keyMetric: 'reward/strict_accuracy',
    alsoChart: ['tools/episodes_with_calls', 'tools/result_copied'],
    check: 'reward/strict_accuracy gain>=0.4',
    budget: 40,
    control: { taskOptions: { useTools: false }, what: 'the calculator taken away' },
    alsoControl: NO_LEARNING,
    backend: 'auto',
  },

  'grpo-copy-gamed': {
    title: 'GRPO on copy with a gameable reward: a length bonus and a prefix verifier',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY,
    seed: 1,
    // 0.1 per token with room for 12: a padded right answer earns more than an honest one, so the
    // check is the hack itself, the share of answers cut at the limit (docs/presets.md).
    config: { ...GAMEABLE_REWARD },
    free: ['lengthBonus', 'verifierMatch', 'lr'],
    keyMetric: 'reward/strict_accuracy',
    alsoChart: ['response_length/clip_ratio', 'reward/mean'],
    check: 'response_length/clip_ratio gain>=0.8',
    budget: 30,
    control: NO_LEARNING,
    backend: 'auto',
  },
  'grpo-copy-counterweight': {
    title: 'The same gameable reward, with DAPO overlong shaping as a counterweight',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY,
    seed: 1,
    // Right answers take at most 7 tokens: L_max 9 with a 2-token buffer charges nothing up to 7
    // and more than padding earns from 9 on; judged at update 25, as the control games late on
    // some seeds (docs/presets.md).
    config: {
      ...GAMEABLE_REWARD,
      overlongEnable: true,
      overlongMaxLength: 9,
      overlongBuffer: 2,
    },
    free: ['lengthBonus', 'overlongEnable', 'overlongBuffer', 'verifierMatch', 'lr'],
    keyMetric: 'response_length/clip_ratio',
    alsoChart: ['response_length/mean', 'reward/strict_accuracy', 'reward/overlong_penalty'],
    check: 'response_length/clip_ratio gain<=0.05 after 25',
    budget: 30,
    control: { config: { overlongEnable: false }, what: 'overlong shaping off' },
    backend: 'auto',
  },
  'ppo-copy': {
    title: 'PPO with a critic on copy, from the shipped noisy-copy checkpoint',
    algo: 'ppo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // 128 prompts × 1 answer: grpo-copy's sample budget, so the two compare on one budget; the
    // value head starts untrained for this task (docs/presets.md).
    config: { lr: 1e-3, promptsPerUpdate: 128 },
    free: ['lr', 'vfCoef', 'lambda', 'clipHigh'],
    keyMetric: 'reward/accuracy',
    alsoChart: ['critic/vf_explained_var'],
    check: 'reward/accuracy gain>=0.3',
    budget: 60,
    control: NO_LEARNING,
    backend: 'auto',
  },

  'grpo-copy-dynamic': {
    title: 'GRPO on copy with DAPO dynamic sampling',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY,
    seed: 1,
    // verl's filter_groups from the shipped copy model, whose groups are often all alike
    // (copy-noisy's rarely are). The check is on the trained batch, and a level, since the
    // mechanism acts from update 1 (docs/presets.md).
    config: { lr: 3e-4, dynamicSampling: true },
    free: ['dynamicSampling', 'maxGenerationRounds', 'lr'],
    keyMetric: 'batch/frac_reward_zero_std',
    alsoChart: ['frac_reward_zero_std', 'perf/generated_tokens'],
    check: 'batch/frac_reward_zero_std<=0.05',
    budget: 15,
    control: { config: { dynamicSampling: false }, what: 'dynamic sampling off' },
    backend: 'auto',
  },
  'grpo-copy-rm': {
    title: 'GRPO on copy against a learned reward model',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_SHORT,
    seed: 1,
    // The reward is the reward model's score alone: answers drift to strings no pair held while
    // that score rises, so the check is the fall in strict accuracy (docs/presets.md).
    config: REWARD_MODEL_RUN,
    rewardModel: COPY_REWARD_MODEL,
    free: ['klCoef', 'lr', 'rewardModelWeight', 'correctWeight'],
    keyMetric: 'reward/strict_accuracy',
    alsoChart: ['reward/model'],
    check: 'reward/strict_accuracy gain<=-0.3',
    budget: 30,
    control: NO_LEARNING,
    backend: 'auto',
  },
  'grpo-copy-rm-kl': {
    title: 'The same run, held near its start by a KL penalty',
    algo: 'grpo',
    ...FROM_SHIPPED_COPY_SHORT,
    seed: 1,
    // grpo-copy-rm with a k3 KL to the start in the loss: a mechanism that prevents a change, so
    // the claim is the difference from its control at update 20 (docs/presets.md).
    config: { ...REWARD_MODEL_RUN, klCoef: 1 },
    rewardModel: COPY_REWARD_MODEL,
    free: ['klCoef', 'lr', 'rewardModelWeight', 'correctWeight'],
    keyMetric: 'reward/strict_accuracy',
    alsoChart: ['reward/model', 'actor/kl_loss'],
    check: 'reward/strict_accuracy gain>=-0.1 after 20',
    budget: 20,
    control: { config: { klCoef: 0 }, what: 'klCoef 0: no KL penalty (grpo-copy-rm)' },
    backend: 'auto',
  },
  'dpo-copy': {
    title: "DPO on copy, from the policy's own right and wrong answers",
    algo: 'dpo',
    ...FROM_SHIPPED_COPY_NOISY,
    seed: 1,
    // The copy-noisy start, 8 prompts × 8 samples per update; β 0.1, TRL's default (docs/presets.md).
    config: { lr: 1e-3 },
    free: ['beta', 'lossType', 'lr'],
    keyMetric: 'reward/success_rate',
    alsoChart: ['rewards/margins', 'rewards/accuracies'],
    check: 'reward/success_rate gain>=0.3',
    budget: 60,
    control: NO_LEARNING,
    backend: 'auto',
  },

  'grpo-shopping-curriculum': {
    title: 'GRPO up the shopping curriculum, from the shipped two-tool model',
    algo: 'grpo',
    task: 'shopping',
    init: { kind: 'shipped', model: 'shopping' },
    sftSteps: 0,
    seed: 1,
    // The rungs set the task's options: one lookup; a lookup and a product; two items; three.
    curriculum: { threshold: 0.85, patience: 3 },
    // 8 prompts × 4 episodes (8 lists per update, so a pass is not one item's luck); the threshold
    // 0.85 lies above what the frozen start reaches by luck (docs/presets.md).
    config: { lr: 3e-4, maxNewTokens: 32, temperature: 0.7, promptsPerUpdate: 8, groupSize: 4 },
    free: ['lr', 'temperature'],
    keyMetric: 'curriculum/level',
    alsoChart: ['reward/accuracy', 'frac_reward_zero_std'],
    check: 'curriculum/level>1',
    budget: 40,
    control: NO_LEARNING,
    backend: 'auto',
  },
  'grpo-calc-forgetting': {
    title: 'GRPO with a calculator, watching the products it knew by heart',
    algo: 'grpo',
    ...FROM_SHIPPED_MULTIPLY_RECALL,
    seed: 1,
    // GRPO on two-digit products with the calculator; the retained task (one-digit products, no
    // tool) is never sampled and shares the decision after '=' (<call> or <answer>) that GRPO
    // moves (docs/presets.md).
    config: CALC_FORGETTING_CONFIG,
    free: ['lr', 'ptxCoef', 'ptxBatch', 'klCoef'],
    keyMetric: 'retained/success_rate',
    alsoChart: ['reward/strict_accuracy', 'tools/episodes_with_calls'],
    check: 'retained/success_rate gain<=-0.3',
    budget: 30,
    control: NO_LEARNING,
    backend: 'auto',
  },
  'grpo-calc-ptx': {
    title: 'The same run with the ptx term: one-digit demonstrations in every step',
    algo: 'grpo',
    ...FROM_SHIPPED_MULTIPLY_RECALL,
    seed: 1,
    // grpo-calc-forgetting with ptxCoef 0.2 and one-digit demonstrations in every step; the
    // coefficient is a trade, as demonstrations and reward pull on the same token (docs/presets.md).
    config: { ...CALC_FORGETTING_CONFIG, ptxCoef: 0.2 },
    free: ['lr', 'ptxCoef', 'ptxBatch', 'klCoef'],
    keyMetric: 'retained/success_rate',
    alsoChart: ['reward/strict_accuracy', 'actor/ptx_loss'],
    check: 'retained/success_rate gain>=-0.1 after 25',
    budget: 30,
    control: { config: { ptxCoef: 0 }, what: 'ptxCoef 0: no ptx term (grpo-calc-forgetting)' },
    backend: 'auto',
  },
} as const satisfies Record<string, LessonPreset>;

export type PresetName = keyof typeof PRESETS;

/** Updates a preset's runs train when the preset states no budget. */
export const DEFAULT_BUDGET = 30;

/** The updates within which a preset claims its check (its control and seeds-block runs train them). */
export function presetBudget(name: PresetName): number {
  return (PRESETS[name] as LessonPreset).budget ?? DEFAULT_BUDGET;
}

export function isPresetName(name: string): name is PresetName {
  return Object.hasOwn(PRESETS, name);
}

export function preset(name: PresetName): LessonPreset {
  return PRESETS[name];
}

/**
 * The full run spec of a preset: the algorithm's defaults, the preset's settings, then the
 * reader's changes to free settings (`changes` keys outside `free` are refused).
 */
export function buildPresetSpec(
  name: PresetName,
  defaults: Settings,
  changes: Settings = {},
  free: readonly string[] = PRESETS[name].free,
): RunSpec {
  const p: LessonPreset = PRESETS[name];
  for (const key of Object.keys(changes)) {
    if (!free.includes(key)) throw new Error(`${key} is locked in preset ${name}`);
  }
  const spec: RunSpec = {
    algo: p.algo,
    seed: p.seed,
    config: { ...defaults, ...p.config, ...changes },
    backend: p.backend,
  };
  if (p.env !== undefined) spec.env = p.env;
  if (p.task !== undefined) spec.task = p.task;
  if (p.sftSteps !== undefined) spec.sftSteps = p.sftSteps;
  if (p.taskOptions !== undefined) spec.taskOptions = { ...p.taskOptions };
  if (p.init !== undefined) spec.init = p.init;
  if (p.rewardModel !== undefined) spec.rewardModel = { ...p.rewardModel };
  if (p.curriculum !== undefined) spec.curriculum = { ...p.curriculum };
  if (p.retained !== undefined) spec.retained = copyRetained(p.retained);
  return spec;
}
