/**
 * Checks for untrusted JSON (imported run files, URL state): each failure is an ImportError naming
 * the JSON path of the bad value — `metrics['reward/mean'][12]`, `spec.config.lr`, `runs[1].seed`
 * — what was expected and what was found. Settings are checked by the algorithm's own FieldSpec
 * (checkField), so an import accepts exactly what the trainer would.
 */
import { OpInputError } from '../ops/errors';
import { CURRICULUM_CONFIG_SPEC, type CurriculumConfig } from '../rl/curriculum';
import { REWARD_MODEL_CONFIG_SPEC, type RewardModelConfig } from '../rl/reward-model';
import { checkField, type ConfigSpec, type FieldSpec } from '../util/hyperparams';
import type { RetainedTaskSpec } from '../worker/run-protocol';
import {
  taskOptionsSpec,
  type AlgorithmInfo,
  type CompareCatalog,
  type Settings,
} from './run-record';

/**
 * What an import accepts at most (run files, and the checkpoints inside them); larger files are
 * refused before any other work.
 */
export const IMPORT_LIMITS = {
  /** Characters of the JSON text (≈ bytes for the ASCII JSON the lab writes): 20 MB. */
  maxChars: 20_000_000,
  /** Metric values over all series. */
  maxPoints: 1_000_000,
  maxMetrics: 1_000,
  maxEvents: 100_000,
  /** Metric, summary and task names. */
  maxNameLength: 200,
  /** Free text: event reasons, labels, backend descriptions. */
  maxTextLength: 2_000,
} as const;

/** A bad file or link: `path` names the value, the message says what is wrong with it. */
export class ImportError extends Error {
  override readonly name: string = 'ImportError';
  constructor(
    /** JSON path of the bad value, e.g. "metrics['reward/mean'][12]"; '(file)' for the whole. */
    readonly path: string,
    /** What is wrong, e.g. 'must be a number or "NaN", got true'. */
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/** The path of `key` inside `path`: a.b, a['x/y'], a[3]; the root is ''. */
export function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${quote(key)}]`;
}

function quote(key: string): string {
  const shown = key.length > 60 ? `${key.slice(0, 57)}…` : key;
  return `'${shown.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** A short description of a found value for messages: 'true', '"abc"', 'an array of 3', … */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}…` : value);
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** A plain JSON object (not an array, not null). */
export function expectRecord(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ImportError(path || '(root)', `must be an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Refuses keys outside required ∪ optional (naming the first) and missing required keys. */
export function expectKeys(
  object: Record<string, unknown>,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): void {
  for (const key of Object.keys(object)) {
    if (!required.includes(key) && !optional.includes(key)) {
      const known = [...required, ...optional].join(', ');
      throw new ImportError(child(path, key), `is not a known field here (known: ${known})`);
    }
  }
  for (const key of required) {
    if (!Object.hasOwn(object, key)) throw new ImportError(child(path, key), 'is missing');
  }
}

/** A string of at most `max` characters (non-empty unless allowEmpty). */
export function expectString(
  value: unknown,
  path: string,
  max: number,
  allowEmpty = false,
): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) {
    throw new ImportError(
      path,
      `must be a ${allowEmpty ? '' : 'non-empty '}string, got ${describeValue(value)}`,
    );
  }
  if (value.length > max) {
    throw new ImportError(path, `must be at most ${max} characters, got ${value.length}`);
  }
  return value;
}

/** An integer in [min, max]. */
export function expectInt(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ImportError(
      path,
      `must be an integer in [${min}, ${max}], got ${describeValue(value)}`,
    );
  }
  return value;
}

/** One of a fixed set of strings. */
export function expectOneOf<T extends string>(
  value: unknown,
  path: string,
  options: readonly T[],
): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
    const list = options.map((o) => `'${o}'`).join(', ');
    throw new ImportError(path, `must be one of ${list}, got ${describeValue(value)}`);
  }
  return value as T;
}

/** Refuses the field at `path` on a run that is not a language model's. */
export function expectLanguageModel(algo: AlgorithmInfo, path: string): void {
  if (algo.family !== 'lm') {
    throw new ImportError(path, `is only for language-model runs, not ${algo.name}`);
  }
}

/** A language-model run's task options at `path`: a subset of the task's own settings. */
export function expectTaskOptions(
  value: unknown,
  path: string,
  algo: AlgorithmInfo,
  catalog: CompareCatalog,
  task: string,
): Settings {
  expectLanguageModel(algo, path);
  // The task was checked against the catalog before its options are read.
  const options = taskOptionsSpec(catalog, task);
  if (!options) throw new ImportError(path, `task '${task}' is not in the catalog`);
  return expectSettings(value, path, options, false);
}

/**
 * A run's retained task at `path` (RunSpec.retained): { task, taskOptions? }, for algorithms that
 * keep one; the task from the catalog, its options a subset of the task's own settings.
 */
export function expectRetained(
  value: unknown,
  path: string,
  algo: AlgorithmInfo,
  catalog: CompareCatalog,
): RetainedTaskSpec {
  if (!algo.retained) throw new ImportError(path, `is not a setting of ${algo.name}`);
  const object = expectRecord(value, path);
  expectKeys(object, path, ['task'], ['taskOptions']);
  const names = catalog.tasks.map((t) => t.name);
  const task = expectOneOf(object.task, child(path, 'task'), names);
  if (object.taskOptions === undefined) return { task };
  const at = child(path, 'taskOptions');
  return { task, taskOptions: expectTaskOptions(object.taskOptions, at, algo, catalog, task) };
}

/**
 * Settings of `algo` at `path`: an object whose every key is a setting of the algorithm and whose
 * every value passes that setting's FieldSpec. With `full`, the result is a whole config: a
 * setting the object lacks takes the algorithm's default; without, any subset (a live change, a
 * diff).
 */
export function expectSettings(
  value: unknown,
  path: string,
  algo: Pick<AlgorithmInfo, 'name' | 'spec' | 'defaults'>,
  full: boolean,
): Settings {
  const object = expectRecord(value, path);
  const out: Settings = {};
  for (const [key, setting] of Object.entries(object)) {
    const at = child(path, key);
    // Own keys only: 'constructor' or 'toString' must not find Object.prototype's members.
    if (!Object.hasOwn(algo.spec, key)) {
      throw new ImportError(at, `is not a setting of ${algo.name}`);
    }
    try {
      checkField(algo.name, key, algo.spec[key]!, setting);
    } catch (error) {
      if (!(error instanceof OpInputError)) throw error;
      // "grpo: lr must be …" → "must be …": the path already names the field.
      throw new ImportError(at, error.message.slice(`${error.op}: ${error.field} `.length));
    }
    out[key] = setting as Settings[string];
  }
  if (full) {
    for (const key of Object.keys(algo.spec)) {
      if (Object.hasOwn(object, key)) continue;
      // A file written before this setting existed. A new setting's default is the behaviour the
      // lab had without it (the reward settings, for one), so the default is what that run used.
      const fallback = algo.defaults[key];
      if (fallback === undefined) throw new ImportError(child(path, key), 'is missing');
      out[key] = fallback;
    }
  }
  return out;
}

/**
 * A shipped model's name (a-z, 0-9, -; at most 64 characters). Format only: whether such a model
 * ships is the worker's run-spec check when the run starts.
 */
export function expectModelName(value: unknown, path: string): string {
  const name = expectString(value, path, 64);
  if (!/^[a-z0-9-]+$/.test(name)) {
    throw new ImportError(path, `must be a model name (a-z, 0-9, -), got ${describeValue(name)}`);
  }
  return name;
}

/**
 * A fixed group of settings at `path` (a curriculum, a reward model): an object with exactly the
 * fields of `spec`, none missing and none other, each value passing its FieldSpec. `name` is the
 * group's name in the trainer's own messages. The result holds the fields in `spec`'s order.
 */
function expectConfigGroup<C extends object>(
  value: unknown,
  path: string,
  name: string,
  spec: ConfigSpec<C>,
): C {
  const object = expectRecord(value, path);
  const fields = Object.keys(spec);
  expectKeys(object, path, fields, []);
  // Not a full read (expectKeys already required every field), so no defaults are needed.
  const group = { name, spec: spec as Record<string, FieldSpec>, defaults: {} };
  const read = expectSettings(object, path, group, false);
  return Object.fromEntries(fields.map((key) => [key, read[key]])) as C;
}

/** A curriculum's settings: exactly threshold and patience, each in its range. */
export function expectCurriculum(value: unknown, path: string): CurriculumConfig {
  return expectConfigGroup(value, path, 'curriculum', CURRICULUM_CONFIG_SPEC);
}

/**
 * A reward model's settings: exactly prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep
 * and lr, each in its range (REWARD_MODEL_CONFIG_SPEC, the worker's own check).
 */
export function expectRewardModel(value: unknown, path: string): RewardModelConfig {
  return expectConfigGroup(value, path, 'rewardModel', REWARD_MODEL_CONFIG_SPEC);
}
