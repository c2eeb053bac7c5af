/**
 * Worker-side: the run catalog (form metadata from the registries) and the checks of a run spec.
 * Imported by the workers only; the UI gets this data through the worker protocols.
 */
import {
  createTokenTask,
  TOKEN_TASK_NAMES,
  TOKEN_TASKS,
  type TokenTaskDefinition,
  type TokenTaskName,
} from '../agents/token-task-registry';
import { POSITION_KINDS } from '../models/transformer-config';
import { OpInputError } from '../ops/errors';
import { describeValue } from '../util/json-checks';
import { checkField, type FieldSpec } from '../util/hyperparams';
import { own } from '../util/own';
import { SHIPPED_MODELS, shippedModel } from './shipped-models';
import { CURRICULUM_CONFIG_SPEC } from '../rl/curriculum';
import { runTasks } from './run-tasks';
import {
  ALGORITHMS,
  curriculumAlgorithms,
  retainedAlgorithms,
  rewardModelAlgorithms,
} from '../rl/registry';
import { REWARD_MODEL_CONFIG_SPEC } from '../rl/reward-model';
import {
  REFERENCE_ENGINES,
  type FieldError,
  type RunCatalog,
  type RunSpec,
  type Settings,
} from './run-protocol';

export const SFT_STEPS = {
  default: 100,
  min: 0,
  max: 5000,
  doc: 'supervised warm-up steps before RL, so the policy sometimes succeeds (TRL: SFTTrainer max_steps)',
};

export function runCatalog(): RunCatalog {
  return {
    algorithms: Object.entries(ALGORITHMS).map(([name, algo]) => ({
      name,
      family: algo.family,
      doc: algo.doc,
      spec: { ...algo.spec },
      defaults: { ...algo.defaults },
      envs: algo.family === 'env' ? [...algo.envs] : [],
      exportsOnnx: algo.family === 'lm' || algo.exportsOnnx === true,
      checkpoints: algo.family === 'lm' || algo.checkpoints === true,
      reference: algo.family === 'lm' ? algo.reference : null,
      curriculum: algo.family === 'lm' && algo.curriculum === true,
      rewardModel: algo.family === 'lm' && algo.rewardModel === true,
      retained: algo.family === 'lm' && algo.retained === true,
    })),
    tasks: TOKEN_TASK_NAMES.map((name) => {
      const task = TOKEN_TASKS[name] as TokenTaskDefinition<Record<string, Settings[string]>>;
      return {
        name,
        doc: task.doc,
        example: { ...task.example },
        spec: { ...task.spec },
        defaults: { ...task.defaults },
        recommended: { ...task.recommended },
        levels: task.difficultyLevels.map((level) => ({ ...level })),
      };
    }),
    sftSteps: SFT_STEPS,
    startingModels: SHIPPED_MODELS.map((m) => ({ ...m, taskOptions: { ...m.taskOptions } })),
  };
}

/** Largest checkpoint or ONNX file a run may start from (the shipped ones are about 0.45 MB). */
export const MAX_START_FILE_BYTES = 32 * 1024 * 1024;

/** Problems of `init` that need no weights read (the worker reads the file when the run starts). */
function checkStartFrom(spec: RunSpec): string | undefined {
  const init = spec.init;
  if (init === undefined) return undefined;
  if (init.kind === 'shipped') {
    const model = shippedModel(init.model);
    if (!model) {
      return `init.model must be one of ${SHIPPED_MODELS.map((m) => m.name).join(', ')}, got '${init.model}'`;
    }
    if (model.task !== spec.task) {
      return `init.model '${model.name}' was warmed up on ${model.task}, not ${spec.task ?? ''}`;
    }
    let needed: number;
    try {
      needed = runTasks(spec).maxChars + 2;
    } catch {
      return undefined; // bad task options are reported under task.*
    }
    if (needed > model.context) {
      const what = spec.retained
        ? 'the task and the retained task need'
        : spec.curriculum
          ? "the curriculum's hardest rung needs"
          : 'these task options need';
      return (
        `init.model '${model.name}' has a context of ${model.context} tokens; ${what} ` +
        `${needed} (at most the model's own: ${JSON.stringify(model.taskOptions)})`
      );
    }
    return undefined;
  }
  if (init.kind === 'file') {
    if (typeof init.name !== 'string' || init.name.length > 256) {
      return 'init.name must be a file name of at most 256 characters';
    }
    if (init.name === '') return 'init: choose a checkpoint (.ckpt) or ONNX (.onnx) file';
    if (!(init.bytes instanceof Uint8Array) || init.bytes.length === 0) {
      return `init.bytes of ${init.name} must be a non-empty file`;
    }
    if (init.bytes.length > MAX_START_FILE_BYTES) {
      return `init.bytes of ${init.name} must be at most ${MAX_START_FILE_BYTES} bytes, got ${init.bytes.length}`;
    }
    return undefined;
  }
  return `init.kind must be 'shipped' or 'file', got '${String((init as { kind: unknown }).kind)}'`;
}

/**
 * RunSpec.positions: one of POSITION_KINDS, and only for a new model (weights bring their own
 * positions, so a choice beside them would be silently ignored).
 */
function checkPositions(spec: RunSpec): string | undefined {
  const positions: unknown = spec.positions;
  if (positions === undefined) return undefined;
  if (!(POSITION_KINDS as readonly unknown[]).includes(positions)) {
    const valid = POSITION_KINDS.map((p) => `'${p}'`).join(', ');
    return `positions must be one of ${valid}, got ${describeValue(positions)}`;
  }
  if (spec.init !== undefined) {
    return 'positions is only for a new model; a run started from weights keeps their positions';
  }
  return undefined;
}

/**
 * The spec with every setting its algorithm has: a run stored before a setting existed lacks it,
 * and a new setting's default is the behaviour the lab had without it (the reward settings, for
 * one), so the default is what that run used. Unknown algorithms pass through for checkRunSpec.
 */
export function withDefaultSettings(spec: RunSpec): RunSpec {
  const algo = own(ALGORITHMS, spec.algo);
  return algo ? { ...spec, config: { ...algo.defaults, ...spec.config } } : spec;
}

/** The problems of a settings group (`scope`.field): each field in range, none unknown or missing. */
function checkSettings(
  scope: string,
  spec: Record<string, FieldSpec>,
  settings: Settings,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(settings)) {
    const field = own(spec, key);
    if (!field) {
      errors.push({ field: `${scope}.${key}`, message: `${key} is not a setting of ${scope}` });
      continue;
    }
    try {
      checkField(scope, key, field, value);
    } catch (error) {
      const message =
        error instanceof OpInputError ? error.message.slice(scope.length + 2) : String(error);
      errors.push({ field: `${scope}.${key}`, message });
    }
  }
  for (const key of Object.keys(spec)) {
    if (!Object.hasOwn(settings, key))
      errors.push({ field: `${scope}.${key}`, message: `${key} is missing` });
  }
  return errors;
}

/**
 * A runner of checks that records each failure in `errors` under its field, e.g. "alpha must be a
 * number in (0, 1], got 2": an OpInputError's field and range, without its scope.
 */
function recordInto(errors: FieldError[]) {
  return (field: string, check: () => void) => {
    try {
      check();
    } catch (error) {
      const message =
        error instanceof OpInputError ? error.message.slice(error.op.length + 2) : String(error);
      errors.push({ field, message });
    }
  };
}

/** `task`'s options, each in range and known, then the task's own cross-field rules. */
function checkTaskOptions(scope: string, task: string, options: Settings): FieldError[] {
  const errors: FieldError[] = [];
  const taskSpec = TOKEN_TASKS[task as TokenTaskName].spec as Record<string, FieldSpec>;
  const attempt = recordInto(errors);
  for (const [key, value] of Object.entries(options)) {
    const field = own(taskSpec, key);
    if (!field) {
      errors.push({ field: `${scope}.${key}`, message: `${key} is not an option of ${task}` });
    } else attempt(`${scope}.${key}`, () => checkField(task, key, field, value));
  }
  // Cross-field rules (e.g. minLength ≤ maxLength) as the task itself checks them.
  if (errors.length === 0) attempt(scope, () => createTokenTask(task, options));
  return errors;
}

/** RunSpec.retained: an algorithm that keeps one, a known task, options in range; and the config's settings that need one. */
function checkRetainedSpec(spec: RunSpec, supported: boolean): FieldError[] {
  const retained = spec.retained;
  if (retained === undefined) {
    return (['ptxCoef', 'retainedEvalPrompts'] as const)
      .filter((key) => Number(spec.config[key] ?? 0) > 0)
      .map((key) => ({
        field: key,
        message: `${key} must be 0 in a run without a retained task (set retained to keep one)`,
      }));
  }
  if (!supported) {
    return [
      {
        field: 'retained',
        message: `retained is only for ${retainedAlgorithms()}, not ${spec.algo}`,
      },
    ];
  }
  if (typeof retained !== 'object' || retained === null) {
    return [{ field: 'retained', message: 'retained must be { task, taskOptions }' }];
  }
  if (!(TOKEN_TASK_NAMES as readonly string[]).includes(retained.task)) {
    const message = `retained.task must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${String(retained.task)}'`;
    return [{ field: 'retained.task', message }];
  }
  return checkTaskOptions('retained.taskOptions', retained.task, retained.taskOptions ?? {});
}

/** Every problem of a spec, one per field (empty when valid); unknown settings are errors too. */
export function checkRunSpec(spec: RunSpec): FieldError[] {
  const errors: FieldError[] = [];
  const attempt = recordInto(errors);
  // Own keys only: 'constructor' names no algorithm, whatever Object.prototype holds.
  const algo = own(ALGORITHMS, spec.algo);
  if (!algo) {
    const known = Object.keys(ALGORITHMS).join(', ');
    return [{ field: 'algo', message: `algo must be one of ${known}, got '${spec.algo}'` }];
  }
  const seedRange = { kind: 'int', min: 0, max: 2 ** 31 - 1, live: false, doc: '' } as const;
  attempt('seed', () => checkField(spec.algo, 'seed', seedRange, spec.seed));
  if (algo.family === 'env') {
    for (const field of ['init', 'positions', 'curriculum', 'rewardModel', 'retained'] as const) {
      if (spec[field] !== undefined) {
        const message = `${field} is only for language-model runs, not ${spec.algo}`;
        errors.push({ field, message });
      }
    }
    if (!spec.env || !algo.envs.includes(spec.env as never)) {
      const message = `env must be one of ${algo.envs.join(', ')} for ${spec.algo}, got '${spec.env ?? ''}'`;
      errors.push({ field: 'env', message });
    }
  } else {
    if (!spec.task || !(TOKEN_TASK_NAMES as readonly string[]).includes(spec.task)) {
      const message = `task must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${spec.task ?? ''}'`;
      errors.push({ field: 'task', message });
    }
    const sft = {
      kind: 'int',
      min: SFT_STEPS.min,
      max: SFT_STEPS.max,
      live: false,
      doc: '',
    } as const;
    attempt('sftSteps', () =>
      checkField(spec.algo, 'sftSteps', sft, spec.sftSteps ?? SFT_STEPS.default),
    );
    const startError = checkStartFrom(spec);
    if (startError) errors.push({ field: 'init', message: startError });
    const positionsError = checkPositions(spec);
    if (positionsError) errors.push({ field: 'positions', message: positionsError });
    if (spec.reference !== undefined && !REFERENCE_ENGINES.includes(spec.reference)) {
      const message = `reference must be one of ${REFERENCE_ENGINES.join(', ')}, got '${String(spec.reference)}'`;
      errors.push({ field: 'reference', message });
    }
    if (spec.curriculum !== undefined) {
      // The algorithm must have one, its fields be in range, and the rungs set the task options.
      if (algo.curriculum !== true) {
        const message = `curriculum is only for ${curriculumAlgorithms()}, not ${spec.algo}`;
        errors.push({ field: 'curriculum', message });
      } else if (typeof spec.curriculum !== 'object' || spec.curriculum === null) {
        errors.push({ field: 'curriculum', message: 'curriculum must be { threshold, patience }' });
      } else {
        const settings = spec.curriculum as unknown as Settings;
        errors.push(...checkSettings('curriculum', { ...CURRICULUM_CONFIG_SPEC }, settings));
        if (spec.taskOptions !== undefined && Object.keys(spec.taskOptions).length > 0) {
          const message =
            "a curriculum sets the task's options rung by rung; leave taskOptions out";
          errors.push({ field: 'taskOptions', message });
        }
      }
    }
    if (spec.rewardModel !== undefined) {
      if (algo.rewardModel !== true) {
        const message = `rewardModel is only for ${rewardModelAlgorithms()}, not ${spec.algo}`;
        errors.push({ field: 'rewardModel', message });
      } else if (typeof spec.rewardModel !== 'object' || spec.rewardModel === null) {
        errors.push({ field: 'rewardModel', message: 'rewardModel must be an object of settings' });
      } else {
        const settings = spec.rewardModel as unknown as Settings;
        errors.push(...checkSettings('rewardModel', { ...REWARD_MODEL_CONFIG_SPEC }, settings));
      }
    } else if (Number(spec.config.rewardModelWeight ?? 0) > 0) {
      const message =
        'rewardModelWeight must be 0 in a run without a reward model (set rewardModel to train one)';
      errors.push({ field: 'rewardModelWeight', message });
    }
    if (spec.task && (TOKEN_TASK_NAMES as readonly string[]).includes(spec.task)) {
      errors.push(...checkTaskOptions('task', spec.task, spec.taskOptions ?? {}));
    }
    errors.push(...checkRetainedSpec(spec, algo.retained === true));
  }
  for (const [key, value] of Object.entries(spec.config)) {
    const field = own(algo.spec, key);
    if (!field) errors.push({ field: key, message: `${key} is not a setting of ${spec.algo}` });
    else attempt(key, () => checkField(spec.algo, key, field, value));
  }
  for (const key of Object.keys(algo.spec)) {
    if (!Object.hasOwn(spec.config, key)) errors.push({ field: key, message: `${key} is missing` });
  }
  return errors;
}
