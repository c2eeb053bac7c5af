/**
 * Checks of the lab's own fields in untrusted JSON (run files, URL state): task options, retained
 * tasks, shipped model names, curricula and reward models, each failing with an ImportError that
 * names the JSON path (src/util/json-checks.ts holds the generic checks these build on).
 */
import { CURRICULUM_CONFIG_SPEC, type CurriculumConfig } from '../rl/curriculum';
import { REWARD_MODEL_CONFIG_SPEC, type RewardModelConfig } from '../rl/reward-model';
import type { ConfigSpec, FieldSpec } from '../util/hyperparams';
import {
  child,
  describeValue,
  expectKeys,
  expectOneOf,
  expectRecord,
  expectSettings,
  expectString,
  ImportError,
} from '../util/json-checks';
import type { RetainedTaskSpec } from '../worker/run-protocol';
import {
  taskOptionsSpec,
  type AlgorithmInfo,
  type CompareCatalog,
  type Settings,
} from './run-record';

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
