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
 * letters it was warmed up on), where it samples a right answer about two times in three (strict
 * accuracy 0.53–0.70 over the first 5 updates, seeds 1–8), so that there is room to fall.
 */
const FROM_SHIPPED_COPY_SHORT = {
  ...FROM_SHIPPED_COPY,
  taskOptions: { ...FROM_SHIPPED_COPY.taskOptions, maxLength: 4 },
} as const;

/**
 * The learning lessons' copy start (src/models/shipped-manifest.json, 'copy-noisy'): warmed up on
 * demonstrations wholly right 30% of the time at every length (letters replaced at random), it
 * writes the right letter most often at every position but samples a whole right answer about a
 * quarter of the time (pass@1 0.26 at temperature 1), while 8 samples of a prompt hold a right
 * one for 7 prompts in 8 (pass@8 0.875): groups with signal, and room to learn.
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
 * A reward model trained on the shipped copy model's answers: 96 prompts × 4 answers, on the 3–4
 * letters of FROM_SHIPPED_COPY_SHORT, give 52 right/wrong pairs on seed 1 (69 on seed 4); 30 steps
 * of 8 pairs, about 4 s on CPU. Measured on seed 1: the Bradley–Terry loss from 0.67 on the first
 * minibatch to 0.45 on the last, 7 of the 10 held-out pairs ordered as the verifier orders them
 * (seed 4: 12 of 13). On 3–6 letters (seed 4): 46 pairs, 0.67 → 0.28, 7 of 9.
 */
const COPY_REWARD_MODEL: RewardModelConfig = {
  prompts: 96,
  samplesPerPrompt: 4,
  labelNoise: 0,
  steps: 30,
  pairsPerStep: 8,
  lr: 1e-3,
};

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
    // Measured (seed 1): best arm in 80% of pulls by update 21; grad variance ≈ 19.6.
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
    // Measured (seed 1): best arm in 80% of pulls by update 35; grad variance ≈ 1.5.
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
    // steps, 20 epochs, γ 0.98, λ 0.8, lr 1e-3, entCoef 0). Measured on CPU (seed 3): the mean
    // return of the last 10 updates reaches 150 at update 21 (about 6 s); with λ = 0 at update
    // 59, with λ = 1 at update 21. Seeds 1–7 reach it at updates 21–66.
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
    // lr 1.5e-3, 16 prompts × 8 answers, two optimizer steps on each batch (TRL num_iterations,
    // verl ppo_epochs: the clipped ratio then matters). Measured on CPU, seeds 1–5 (bench:learn
    // --only=lessons): passes at updates 15–19 (14.8–17.6 CPU s); success 0.19–0.25 at update 1,
    // 0.39–0.42 over the first 5, 0.81–0.91 over updates 51–60; the control (lr 1e-9) gains −0.02
    // to +0.02 in 60 updates. From this start 8 prompts were too few: at lr 1e-3 seed 1 gained
    // 0.28 in 60 updates and seed 4 passed only at 53; at 1.5e-3 seeds 3 and 4 passed at 55 and 53
    // and seeds 1 and 5 fell back after passing; at 2e-3 seed 5 collapsed (−0.13).
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
    // grpo-copy's start, 8 prompts × 8 answers at lr 4e-3 (grpo-copy: 16 prompts at 1.5e-3), one
    // step per batch. The policy turns deterministic: each prompt's group comes out all right or
    // all wrong, so the share of groups with no signal rises by 0.3 or more over the run's first 5
    // updates (seed 1: actor/entropy 0.54 → 0.07–0.20 from update 11 on; the share 0.05 over the
    // first 5 updates, 0.70 over updates 21–30, while success goes only 0.46 → 0.54). Measured on
    // CPU, seeds 1–5 (bench:learn --only=lessons): passes at updates 15–21 (4.7–6.9 CPU s), the
    // share up by 0.31–0.45 there; the control (lr 1e-3) +0.04 to +0.19 in 30 updates, never
    // passing: its share rises only as answers come out right (seed 1: success 0.35 → 0.71). On the
    // previous copy start (30% of letters noisy in every answer) lr 6e-3 collapsed within the
    // first 5 updates, before the run had measured its start.
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
    // 'dr_grpo'; grpo-copy's start, lr and batch otherwise. Measured on CPU, seeds 1–5 (bench:learn
    // --only=lessons): passes at updates 15–23 (15.0–22.7 CPU s; grpo-copy: 15–19); the control
    // at lr 1e-9 never in 60.
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
    // grpo-copy-collapse's start at lr 6e-3 (grpo-copy-collapse: 4e-3), with verl's GRPO KL:
    // use_kl_loss, kl_loss_type low_var_kl (k3), kl_loss_coef 3. The check is on the policy's
    // entropy, the collapse itself, not on the KL, so that a run started with klCoef 0 (no
    // reference, a KL of 0) cannot pass it: at update 20 (and after) actor/entropy over the last
    // 10 updates has not fallen below its mean over the run's first 5. A mechanism that prevents a
    // change: the claim is the difference from the control (klCoef 1e-6: a reference, no pull, a
    // run that turns deterministic as grpo-copy-collapse does) on the same seed at update 20.
    // Measured on CPU, seeds 1–5 (bench:learn --only=lessons): passes at update 20 on all five,
    // entropy up by 0.15–0.33 (0.60–0.65 over the first 5 updates → 0.77–0.93 over updates 11–20);
    // the control falls by 0.27–0.35 by update 25 (0.47–0.55 → 0.14–0.22), never passing; the
    // difference 0.49–0.66. On the previous copy start (30% of letters noisy in every answer)
    // seeds 6–8 passed too (+0.24 to +0.26) and their controls fell by 0.09, 0.20 and 0.40 (a
    // threshold of −0.15 would have passed seed 6's control). k3's gradient is that of
    // KL(ref ‖ policy), which spreads mass over what the reference covered, so entropy rises
    // above the start. The earlier check, frac_reward_zero_std gain<=0.2 after 20, passed on 4 of
    // 5 (seed 4 +0.36): with accuracy falling, all-wrong groups lose their signal too.
    config: { lr: 6e-3, klCoef: 3, klEstimator: 'k3', klPenalty: 'loss' },
    free: ['lr', 'klCoef', 'klEstimator'],
    keyMetric: 'actor/entropy',
    alsoChart: ['actor/kl_loss', 'frac_reward_zero_std', 'reward/accuracy'],
    check: 'actor/entropy gain>=0 after 20',
    budget: 25,
    control: { config: { klCoef: 1e-6 }, what: 'klCoef 1e-6: a reference, no pull' },
    backend: 'auto',
  },
  'grpo-multiply-tools': {
    title: 'GRPO with a calculator, from the shipped multiply checkpoint',
    algo: 'grpo',
    task: 'multiply',
    // The options the shipped multiply model was warmed up on (src/models/shipped-manifest.json):
    // two-digit factors, and a demonstrator that called the calculator on half the prompts and
    // answered from memory on the rest. Sampled at 0.85 the start calls in 0.27 of episodes and
    // is right in 0.26 (pass@8 0.90); from memory it is right on almost no two-digit product.
    taskOptions: { minDigits: 2, maxDigits: 2, useTools: true },
    init: { kind: 'shipped', model: 'multiply' },
    sftSteps: 0,
    seed: 1,
    // 32 tokens per turn (the task's recommended budget); temperature 0.85, the build's. The
    // check is on strict success (the answer exactly right). Measured on CPU, seeds 1–5
    // (bench:learn --only=lessons, bench/results/learn-2026-12-05T19-09-59-936Z.json): sampled
    // success 0.23–0.34 at update 1; passes at updates 15, 15, 16, 17, 15 (13–15 CPU s), a gain
    // of 0.41–0.46; run for all 40 updates (bench/results/2026-12-05T19-10-00Z-multiply-tools-
    // 40-updates-cpu.json), success over the last 10 is 0.96, 0.88, 0.99, 0.99, 0.96 and calls
    // 0.99–1.00 (0.28–0.34 at update 1). The mean of updates 1–5 (0.38–0.46) is above the start because learning begins at
    // once. Both controls fail on all five: without the calculator success stays near 0 (gain
    // ≤ 0.01); at lr 1e-9 the gain is −0.03 to +0.03. Answers after a call copy its result
    // 0.90–1.00 of the time over the last 10 updates: the start copies three-digit results too
    // (185 of 187) since its warm-up learned the calc demonstrations alone first; the previous
    // start (the mixture from the first step) copied 34 of 186 and capped success near 0.9
    // (0.84–0.92 over the last 10, passes at updates 17–31).
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
    // 0.1 per token and room for 12: a right answer padded to the limit earns 1 + 1.2, the honest
    // one at most 1 + 0.7. The check is the hack itself: the share of answers cut at the 12-token
    // limit (no <eos>) rises by 0.8 over the run's first 5 updates, where it is 0–0.08. Measured on
    // CPU, seeds 1–5 (25 updates): strict accuracy 0.23–0.66 at update 1, 0 at every update from
    // update 10–17 on; cut answers 0.97–1 from update 11–25 on. The check passes at updates 16–29
    // (median 21, 5.8–9.9 CPU s); the control (lr 1e-9) cuts no answer in 30 (bench:learn).
    config: { maxNewTokens: 12, lengthBonus: 0.1, verifierMatch: 'prefix' },
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
    // Right answers are at most 7 tokens (6 letters and <eos>): L_max 9 with a 2-token buffer
    // charges nothing up to 7, −0.5 at 8 and −1 from 9 on, more than the 0.5 that padding on to
    // 12 earns. The check: at update 25 the share of answers cut at the limit has not risen by
    // more than 0.05; the control is grpo-copy-gamed itself. Measured on CPU, seeds 1–5
    // (bench:learn --only=lessons): passes at update 25 on all five (a change of 0.00–0.01,
    // 7.3–7.9 CPU s); the control's share rises by 0.91–1.00 by update 30. Judged at update 20
    // instead, the control passed on seed 5, whose gaming starts late. (Seed 1, 30 updates:
    // response_length/mean 5.9–6.9; strict accuracy still falls, 0.38 → 0.13 by update 20:
    // within the free 7 tokens the prefix verifier is still gamed.)
    config: {
      maxNewTokens: 12,
      lengthBonus: 0.1,
      verifierMatch: 'prefix',
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
    // 128 prompts × 1 answer: the sample budget of grpo-copy (16 prompts × 8 answers), so the two
    // compare on one budget. The shipped model's value head starts untrained for this task.
    // Measured on CPU, seeds 1–5 (bench:learn --only=lessons): passes at updates 15–25 (median 18,
    // 15–31 CPU s); the control at lr 1e-9 never in 60. At grpo-copy's lr 1.5e-3 seed 1 gained
    // only 0.08 in 60 updates. critic/vf_explained_var stays below 0 for 30 updates on seed 1
    // (−0.17 to −0.03; about 0 by update 23 with vfCoef 0.5) while success goes 0.32 → 0.85.
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
    // GRPO from the shipped copy model (8 prompts × 8 answers) with verl's filter_groups on; not
    // from copy-noisy, whose groups are rarely all alike. Measured on CPU (seed 4, 30 updates): about
    // half of the sampled groups have equal rewards (frac_reward_zero_std 0.4–0.75), so an update
    // takes 2–4 generation rounds (690–1,420 generated tokens against 270–420 without); the
    // trained batch holds none of them. The check is on the trained batch, so that a run with
    // dynamic sampling off (about half its groups zero-std) cannot pass it; a level, not a gain,
    // because the mechanism acts from update 1 (no start to move from). Measured on CPU, seeds
    // 1–5 (bench:learn --only=lessons): passes at update 10 on all five (4.3–5.2 CPU s); the
    // control's trained batch is 0.42–0.65 zero-std groups over the last 10 of 15 updates.
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
    // The reward is the reward model's score alone; the answers drift to strings that no pair
    // held, of one or two letters and longer than the prompt ('cccccc' for 'bbee' on seed 4,
    // 'aabaaaaa' for 'abc' on seed 1), while the model's score rises (seed 1: +0.57 by update 20).
    // The check: strict accuracy falls by 0.3 below the run's first 5 updates (0.53–0.70 on 3–4
    // letters; on 3–6 the start was 0.28–0.48 and the fall 0.25–0.32 on seeds 1–5, 0.17 on seed
    // 8). Measured on CPU (bench:learn --only=lessons), seeds 1–5: passes at updates 15–16, a fall
    // of 0.31–0.52 (0.44–0.61 by update 20; 7.0–9.2 CPU s, median 7.2); the control (lr 1e-9)
    // −0.04 to +0.07 in 30 updates, never passing. Seeds 6–10 (a confirmation): passes at 15–17 on
    // all five (−0.32 to −0.49); the controls 0/5. At a threshold of 0.4 seed 9 failed (its reward model harder to game: −0.34 at
    // update 20, −0.26 at 30), hence 0.3.
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
    // grpo-copy-rm with a k3 KL to the starting policy in the loss (klCoef 1). The check: at update
    // 20 strict accuracy has not fallen by more than 0.1. A mechanism that prevents a change: the
    // claim is the difference from the control (klCoef 0, grpo-copy-rm itself) on the same seed at
    // update 20. Measured on CPU (bench:learn --only=lessons), seeds 1–5: −0.06 to +0.06 at update
    // 20, passing on all five (9.2–11.9 CPU s); the control −0.44 to −0.61, never passing; the
    // difference 0.43–0.59. Seeds 6–10: passes on all five (−0.02 to +0.08); the control −0.34 to
    // −0.56; the difference 0.34–0.61. (On 3–6 letters: 4 of 5, seed 5 −0.17; at klCoef 0.5, seed
    // 4, strict accuracy sank to 0.24 by update 30.)
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
    // The copy-noisy start, lr 1e-3, 8 prompts × 8 samples per update; β 0.1 (TRL's default).
    // Measured on CPU, seeds 1–5 (bench:learn --only=lessons): passes at updates 20–29 (4.6–6.3
    // CPU s), success 0.28–0.34 over the first 5 updates → 0.60–0.65 over the last 10; the control
    // at lr 1e-9 never in 60 (−0.03 to +0.02).
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
    // 8 prompts × 4 episodes (8 different lists per update, so the pass rate is not one item's
    // luck), lr 3e-4, temperature 0.7. Threshold 0.85, above what the frozen start reaches by
    // luck: at lr 1e-9 it passes rung 1 at 0.41–0.91 an update (seed 2), and at 0.8 that control
    // climbed to rung 2 on seed 2 (update 18) of seeds 1–3. Measured on CPU, seeds 1–5, beside the
    // control for 40 updates (bench/results/2026-12-05T14-28-00Z-shopping-curriculum-cpu.json):
    // the check passes at updates 17–30 (median 23; 21–35 s of CPU time, median 28); no control
    // passes (four end at rung 1, seed 5's reaches it at update 33). At 0.9 seed 4 had not passed
    // by update 40. On rung 2 (two items: the warm-up never wrote two lookups) every group fails.
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
    // GRPO on two-digit products with the calculator (8 prompts × 8 answers, lr 3e-4 as in the
    // curriculum run, temperature 0.85 as the build samples); the retained task, one-digit
    // products with no tool offered, is never sampled. Measured on CPU over seeds 1–5 (bench:learn
    // --only=lessons, bench/results/learn-2026-12-05T19-09-40-511Z.json): the check passes at
    // update 15 on all five (one-digit success −0.51, −0.45, −0.48, −0.50, −0.46 against the first
    // 5 updates; 15.1–16.7 CPU s, median 15.8); the control (lr 1e-9, same seeds and prompts)
    // stays at its start (0.00 on all five by update 30). Over the same 30 updates the trained
    // task rises: strict success 0.44–0.54 over updates 1–5 → 0.81–0.85 over 21–30 (gain +0.34,
    // +0.37, +0.33, +0.37, +0.31; +0.09 to +0.18 at update 15), calls 0.44–0.55 at update 1 →
    // 0.85–0.88; one-digit success 0.81 after update 1 on every seed, 0 from updates 14–16. The
    // answers go to calls: on seed 1 the same run judged with the calculator offered on the
    // one-digit prompts answers 0.81 of them after update 1 and 1.00 from update 12. Why
    // this retained task: both read "a*b=", and the first token after "=" (<call> or <answer>)
    // is what GRPO moves on the two-digit prompts. Retained tasks that share no such decision with
    // the trained one barely moved: from the shipped shopping model (shopping trained, multiply
    // with calc or memorised products or prices retained) at lr 1e-3, −0.18 to +0.01 (bench/
    // results/2026-12-05T16-20-00Z-shopping-forgetting-memorised-retained-cpu.json), and at
    // 1.5e-3–3e-3 shopping itself collapsed first (…13-40-00Z-shopping-forgetting-collapse-cpu.json).
    // From this start lr 1e-3 and 2e-3 forget within 2–5 updates, faster than the first-5
    // baseline can see (gains −0.08 to −0.23 on seeds 1–2). A trial start without the one-digit
    // calls in its warm-up (greedy one-digit success 81.6%, never a call there) forgot less:
    // −0.17 on seeds 1–2 at lr 1e-3, −0.34 and −0.24 at 2e-3; at 3e-3 its trained task collapsed
    // on seed 2 (strict success 0 from update 5). klCoef 0.5 does not keep the retained task (its
    // KL is on two-digit episodes only): −0.69 and −0.66 on seeds 1–2, strict success +0.33, +0.34.
    // The series of these trials and of the 30-update runs above: bench/results/2026-12-05T19-20-
    // 00Z-calc-forgetting-sweeps-cpu.json.
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
    // grpo-calc-forgetting with ptxCoef 0.2 and 8 one-digit demonstrations (answered from memory)
    // in every optimizer step. The check: at update 25 one-digit success is no more than 0.1
    // below the first 5 updates; a mechanism that prevents a change, so the claim is the
    // difference from the control (ptxCoef 0, grpo-calc-forgetting) on the same seed. Measured on
    // CPU, seeds 1–5 (bench/results/learn-2026-12-05T19-09-40-511Z.json): passes at update 25 on
    // all five (+0.11, +0.08, +0.10, +0.06, +0.15; 25.1–27.0 CPU s, median 26.4); the control
    // −0.66 to −0.70, never passing; the difference 0.74–0.84. The trained task still learns:
    // strict success 0.45–0.52 over updates 1–5 → 0.68–0.70 over 21–30 (gain +0.19 to +0.24;
    // +0.15 to +0.18 at update 25), against 0.81–0.85 without ptx. On seeds 4–5 one-digit success
    // dipped to 0.62 around update 12 before rising to 0.94–1.00. The coefficient is a trade,
    // because the demonstrations (<answer> after "a*b=") and the reward (<call>) pull on the same
    // token: at ptxCoef 1 (seeds 1–2) one-digit success rose to 1.00 and strict success fell
    // (0.39 → 0.23, 0.42 → 0.24, first 5 → last 10 of 30); at 0.1 one-digit success fell by 0.43
    // on both seeds while strict success rose by 0.30 and 0.28 (series: bench/results/2026-12-05T19-
    // 20-00Z-calc-forgetting-sweeps-cpu.json).
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
