/**
 * The flags of `npm run train`, read and checked before any training and without touching a file:
 * a bad value costs no warm-up, and whatever passes here is what the lab's run-file import accepts
 * (the same ranges: the seed's MAX_SEED, the warm-up's SFT_STEPS, the model's TRANSFORMER_LIMITS,
 * the backends of BACKEND_CHOICES, each setting's FieldSpec).
 */
import { MAX_SEED } from '../compare/run-file';
import { broughtModelFlags, type BroughtModelFlags } from './train-brought-flags';
import {
  createTokenTask,
  TOKEN_TASK_NAMES,
  TOKEN_TASKS,
  type TokenTaskName,
} from '../agents/token-task-registry';
import { BACKEND_CHOICES, type BackendChoice } from '../gpu/backend-choice';
import { OpInputError } from '../ops/errors';
import { parseDecimal } from '../util/decimal';
import {
  LAB_MODEL_SHAPE,
  POSITION_KINDS,
  TRANSFORMER_LIMITS,
  type ModelShape,
  type PositionKind,
} from '../models/transformer-config';
import {
  CURRICULUM_CONFIG_SPEC,
  DEFAULT_CURRICULUM_CONFIG,
  type CurriculumConfig,
} from '../rl/curriculum';
import {
  algorithm,
  curriculumAlgorithms,
  retainedAlgorithms,
  rewardModelAlgorithms,
  type EnvAlgorithm,
  type EnvName,
  type LmAlgorithm,
} from '../rl/registry';
import { checkRetained, type RetainedConfig } from '../rl/retained-task';
import {
  checkRewardModelWeight,
  DEFAULT_REWARD_MODEL_CONFIG,
  REWARD_MODEL_CONFIG_SPEC,
  type RewardModelConfig,
} from '../rl/reward-model';
import {
  checkConfig,
  checkField,
  configFromFlags,
  kebab,
  type ConfigSpec,
  type FieldSpec,
} from '../util/hyperparams';
import { REFERENCE_ENGINES, type RetainedTaskSpec, type Settings } from '../worker/run-protocol';
import { SFT_STEPS } from '../worker/run-spec';
import { runTasks, type RunTasks } from '../worker/run-tasks';
import { CliArgs, FlagError } from './args';
import { checkRunFileBudget } from './run-file-budget';

/**
 * Most updates one run may ask for. With --out, fewer: the run file holds every metric once per
 * update, and must stay within the lab's import limits (cli/run-file-budget.ts).
 */
export const MAX_UPDATES = 100_000;

/** Prompts of a language-model run's final greedy evaluation (`--eval-samples`). */
export const DEFAULT_EVAL_SAMPLES = 256;

/** Seconds between the run file's saves while training (`--save-every`). */
export const DEFAULT_SAVE_EVERY_S = 30;

export type Config = Record<string, number | boolean | string>;

export interface LmFlags {
  algo: LmAlgorithm;
  taskName: TokenTaskName;
  taskOptions: Settings;
  curriculum?: CurriculumConfig;
  retained?: RetainedTaskSpec;
  tasks: RunTasks;
  rewardModel?: RewardModelConfig;
  backend: BackendChoice;
  reference: 'engine' | 'ort';
  init?: string;
  sftSteps: number;
  shape: ModelShape;
  /** A new model's positions (`--positions`; a model from --init keeps its own). */
  positions: PositionKind;
  /** A brought model trained through LoRA (`--model=DIR`; cli/train-brought-flags.ts). */
  model?: BroughtModelFlags;
  /** Prompts of the greedy evaluation after the last update (`--eval-samples`; 0: none). */
  evalSamples: number;
}

export interface TrainFlags {
  name: string;
  seed: number;
  updates: number;
  logEvery: number;
  /** Seconds between saves of the run file while training. */
  saveEvery: number;
  out?: string;
  config: Config;
  run: { family: 'env'; algo: EnvAlgorithm; env: EnvName } | ({ family: 'lm' } & LmFlags);
}

/**
 * Every flag of a training run, checked; throws a FlagError naming the flag. A setting's own check
 * (an OpInputError naming the field: "grpo: klCoef must be …") is passed on with the flag put in
 * front ("--kl-coef: grpo: klCoef must be …"), so every refusal names what to change on the line.
 */
export function readTrainFlags(argv: readonly string[]): TrainFlags {
  try {
    return readFlags(argv);
  } catch (error) {
    if (!(error instanceof OpInputError)) throw error;
    const flag = flagOf(error);
    throw new FlagError(flag, `--${flag}: ${error.message}`);
  }
}

/** Where a setting's field is set on the command line: its scope gives the flag's prefix. */
const SCOPE_PREFIX: Readonly<Record<string, string>> = {
  rewardModel: 'reward-model-',
  curriculum: 'curriculum-',
  retained: 'retained-',
};

function flagOf(error: OpInputError): string {
  const prefix = Object.hasOwn(SCOPE_PREFIX, error.op) ? SCOPE_PREFIX[error.op]! : '';
  return `${prefix}${kebab(error.field)}`;
}

function readFlags(argv: readonly string[]): TrainFlags {
  const args = new CliArgs(argv);
  const name = args.string('algo', 'grpo');
  const algo = algorithm(name);
  const seed = args.int('seed', 1, { min: 0, max: MAX_SEED });
  const updates = args.int('updates', 100, { min: 1, max: MAX_UPDATES });
  const logEvery = args.int('log-every', 10, { min: 1, max: MAX_UPDATES });
  const saveEvery = args.real('save-every', DEFAULT_SAVE_EVERY_S, {
    min: 0,
    max: 86_400,
    minOpen: true,
  });
  const out = args.optional('out');
  // A run file the lab would refuse is refused now, not after the last update.
  if (out) checkRunFileBudget(name, updates);
  const config = { ...algo.defaults, ...configFromFlags(name, algo.spec, args.all()) } as Config;
  markUsed(args, algo.spec);
  const common = { name, seed, updates, logEvery, saveEvery, ...(out ? { out } : {}), config };

  if (algo.family === 'env') {
    const env = args.string('env', algo.envs[0]!);
    if (!(algo.envs as readonly string[]).includes(env)) {
      throw new OpInputError(
        'train',
        'env',
        `must be one of ${algo.envs.join(', ')} for ${name}, got '${env}'`,
      );
    }
    args.checkAllUsed();
    return { ...common, run: { family: 'env', algo, env: env as EnvName } };
  }
  const rewardModel = rewardModelFromFlags(args, algo);
  if (rewardModel && 'rewardModelWeight' in algo.spec && !args.all().has('reward-model-weight')) {
    // A reward model is trained to be used: weight 1 unless given, as the lab's form does.
    config.rewardModelWeight = 1;
  }
  const lm = lmFlags(args, algo);
  args.checkAllUsed();
  // The algorithm's own rules that need no model, now rather than after the warm-up: a reward
  // weight with no reward model, ptx or retained evaluation with no retained task.
  if (!rewardModel && 'rewardModelWeight' in config) {
    checkRewardModelWeight(config as { rewardModelWeight: number }, undefined, name);
  }
  if (!lm.retained && 'ptxCoef' in config) {
    checkRetained(config as unknown as RetainedConfig, undefined, 0, name);
  }
  return { ...common, run: { family: 'lm', ...lm, ...(rewardModel ? { rewardModel } : {}) } };
}

function lmFlags(args: CliArgs, algo: LmAlgorithm): Omit<LmFlags, 'rewardModel'> {
  const model = broughtModelFlags(args);
  const taskName = args.string('task', 'reverse');
  if (!(TOKEN_TASK_NAMES as readonly string[]).includes(taskName)) {
    throw new OpInputError(
      'train',
      'task',
      `must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${taskName}'`,
    );
  }
  const definition = TOKEN_TASKS[taskName as TokenTaskName];
  const taskSpec = definition.spec as ConfigSpec<Settings>;
  const taskOptions = configFromFlags(taskName, taskSpec, args.all()) as Settings;
  markUsed(args, taskSpec);
  const curriculum = curriculumFromFlags(args, algo, Object.keys(taskOptions));
  const retained = retainedFromFlags(args, algo);
  const tasks = runTasks({
    task: taskName,
    taskOptions,
    ...(curriculum ? { curriculum } : {}),
    ...(retained ? { retained } : {}),
  });
  const backend = args.choice('backend', BACKEND_CHOICES, 'auto');
  const reference = args.choice('reference', REFERENCE_ENGINES, 'engine');
  const evalSamples = args.int('eval-samples', DEFAULT_EVAL_SAMPLES, { min: 0, max: 100_000 });
  const init = args.optional('init');
  const sftSteps = args.int('sft-steps', 300, { min: SFT_STEPS.min, max: SFT_STEPS.max });
  const shapeFlag = (key: keyof ModelShape) => {
    const [min, max] = TRANSFORMER_LIMITS[key];
    return args.int(key, LAB_MODEL_SHAPE[key], { min, max });
  };
  const shape = {
    width: shapeFlag('width'),
    layers: shapeFlag('layers'),
    heads: shapeFlag('heads'),
  };
  if (shape.width % shape.heads !== 0) {
    throw new OpInputError(
      'train',
      'width',
      `must be a multiple of --heads (${shape.heads}), got ${shape.width}`,
    );
  }
  const positions = args.choice('positions', POSITION_KINDS, 'learned');
  if (init && args.all().has('positions')) {
    // The file's model has positions of its own; the flag would be silently ignored.
    throw new OpInputError(
      'train',
      'positions',
      `is for a new model; --init=${init} keeps the positions of its own model`,
    );
  }
  if (positions === 'rotary' && (shape.width / shape.heads) % 2 !== 0) {
    throw new OpInputError(
      'train',
      'positions',
      `rotary needs an even head size (--width / --heads), got ${shape.width} / ${shape.heads}`,
    );
  }
  return {
    algo,
    taskName: taskName as TokenTaskName,
    taskOptions,
    ...(curriculum ? { curriculum } : {}),
    ...(retained ? { retained } : {}),
    tasks,
    backend,
    reference,
    ...(init ? { init } : {}),
    sftSteps,
    shape,
    positions,
    ...(model ? { model } : {}),
    evalSamples,
  };
}

/**
 * `--curriculum` (with optional `--curriculum-threshold`, `--curriculum-patience`): train through
 * the task's rungs. Refused for algorithms without one, and beside task option flags (the rungs set
 * the options).
 */
function curriculumFromFlags(
  args: CliArgs,
  algo: LmAlgorithm,
  taskFlags: readonly string[],
): CurriculumConfig | undefined {
  const on = args.switchText('curriculum');
  const threshold = args.optional('curriculum-threshold');
  const patience = args.optional('curriculum-patience');
  if (on === undefined && threshold === undefined && patience === undefined) return undefined;
  if (on !== undefined && on !== 'true') {
    throw new OpInputError('train', 'curriculum', `is a switch (--curriculum), got '${on}'`);
  }
  if (!algo.curriculum) {
    throw new OpInputError('train', 'curriculum', `is only for ${curriculumAlgorithms()}`);
  }
  if (taskFlags.length > 0) {
    throw new OpInputError(
      'train',
      'curriculum',
      `sets the task's options rung by rung; leave out --${taskFlags.map(kebab).join(', --')}`,
    );
  }
  const config: CurriculumConfig = {
    // A text left by decimal() is refused by checkConfig below, quoted.
    threshold:
      threshold === undefined
        ? DEFAULT_CURRICULUM_CONFIG.threshold
        : (decimal(threshold) as number),
    patience:
      patience === undefined ? DEFAULT_CURRICULUM_CONFIG.patience : (decimal(patience) as number),
  };
  checkConfig('curriculum', CURRICULUM_CONFIG_SPEC, config);
  return config;
}

/**
 * `--reward-model` (with optional `--reward-model-<field>` flags, one per field of
 * REWARD_MODEL_CONFIG_SPEC in kebab case; the rest take DEFAULT_REWARD_MODEL_CONFIG): train a
 * learned reward model before RL. Refused for algorithms that cannot use one, and the field flags
 * refused without the switch (they would silently do nothing). Reads every such flag, so
 * checkAllUsed() knows them.
 */
function rewardModelFromFlags(args: CliArgs, algo: LmAlgorithm): RewardModelConfig | undefined {
  const on = args.switchText('reward-model');
  const fields = Object.entries(REWARD_MODEL_CONFIG_SPEC) as [keyof RewardModelConfig, FieldSpec][];
  const given = fields
    .map(([key, spec]) => ({ key, spec, flag: `reward-model-${kebab(key)}` }))
    .map((f) => ({ ...f, raw: args.optional(f.flag) }))
    .filter((f): f is typeof f & { raw: string } => f.raw !== undefined);
  if (on === undefined && given.length === 0) return undefined;
  if (on !== undefined && on !== 'true') {
    throw new OpInputError('train', 'reward-model', `is a switch (--reward-model), got '${on}'`);
  }
  if (!algo.rewardModel) {
    throw new OpInputError('train', 'reward-model', `is only for ${rewardModelAlgorithms()}`);
  }
  if (on === undefined) {
    throw new OpInputError(
      'train',
      given[0]!.flag,
      'sets the learned reward model, which only --reward-model trains; add --reward-model',
    );
  }
  const config: RewardModelConfig = { ...DEFAULT_REWARD_MODEL_CONFIG };
  for (const { key, spec, raw } of given) {
    const value = decimal(raw);
    // "rewardModel: steps must be an integer in [1, 2000], got 0" (the run file's names).
    checkField('rewardModel', key, spec, value);
    config[key] = value as number; // checked above
  }
  return config;
}

/**
 * `--retained=<task>` with `--retained-<option>` flags from that task's spec: the second task a
 * GRPO or PPO run keeps. Options are checked by the task's FieldSpecs, then by the task itself.
 */
function retainedFromFlags(args: CliArgs, algo: LmAlgorithm): RetainedTaskSpec | undefined {
  const task = args.optional('retained');
  if (task === undefined) return undefined;
  if (!algo.retained) {
    throw new OpInputError('train', 'retained', `is only for ${retainedAlgorithms()}`);
  }
  if (!(TOKEN_TASK_NAMES as readonly string[]).includes(task)) {
    throw new OpInputError(
      'train',
      'retained',
      `must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${task}'`,
    );
  }
  const spec = TOKEN_TASKS[task as TokenTaskName].spec as ConfigSpec<Settings>;
  // `--retained-max-digits=2` read as the task's own `--max-digits=2` would be.
  const flags = new Map<string, string>();
  for (const key of Object.keys(spec)) {
    const raw = args.optional(`retained-${kebab(key)}`);
    if (raw !== undefined) flags.set(kebab(key), raw);
  }
  const taskOptions = configFromFlags('retained', spec, flags) as Settings;
  createTokenTask(task, taskOptions); // the task's own cross-field rules
  return Object.keys(taskOptions).length === 0 ? { task } : { task, taskOptions };
}

/**
 * A flag's number in decimal notation; anything else (`0x10`) becomes its own text, which the
 * field's check then refuses, quoting it.
 */
function decimal(raw: string): number | string {
  const value = parseDecimal(raw);
  return Number.isNaN(value) ? raw : value;
}

/** Marks a spec's flags as known, so checkAllUsed() only reports typos. */
function markUsed(args: CliArgs, spec: object): void {
  for (const key of Object.keys(spec)) args.switchText(kebab(key));
}
