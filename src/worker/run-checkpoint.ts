/**
 * A run's checkpoint: one representation (RunCheckpoint) and its encodings, in one module.
 *
 * A checkpoint is a run's whole state between two updates, so that a stored or imported run
 * resumes at once instead of replaying every update: the policy's weights and AdamW moments, the
 * frozen reference's weights (when the run scores one), the trained reward model, and the
 * trainer's own state (TrainerState; PPO on CartPole adds its environments under `env`).
 * Language-model runs and ppo-mlp have one; other environment runs replay in seconds.
 *
 * Its forms, each a function here:
 * - in memory, over postMessage and as an IndexedDB record: the object itself (typed arrays and
 *   JSON, which structured clone keeps); a record read back from an earlier visit, maybe an older
 *   lab, goes through checkpointFromRecord, which gives undefined rather than trust it;
 * - inside a lab-run file (src/compare/run-file.ts): checkpointToJson / checkpointFromJson, the
 *   float arrays as the base64 of their little-endian float32 bytes:
 *
 *     checkpoint: { version: 1, step, backend: 'webgpu' | 'cpu',
 *                   policy: { params, m, v, stats },       each base64 float32
 *                   reference?, rewardModel?: { params, mean, std },
 *                   trainer: { algorithm, step, config, events, health, skippedInARow, random,
 *                              curriculum?: { level, streak },
 *                              env?: { globalStep, seconds, nextObs, vector } } }
 *
 * checkpointProblem is the shape check both sides of the worker boundary share, and the last word
 * of every decoder here. Reading JSON checks every field (untrusted text): arrays must decode to
 * finite floats of the right counts (a NaN weight is refused here, never trained on), the
 * trainer's config passes the algorithm's FieldSpecs and its events the run file's event check.
 * What only the run can judge (the weight count of its model, the random streams' names) is left
 * to the run host (lm-setup.ts, trainer-state.ts), which refuses a checkpoint that does not fit;
 * the lab then replays the run instead.
 *
 * (A model file, .ckpt — src/models/checkpoint.ts — is not a run checkpoint: it holds one model's
 * weights by tensor name with its config and tokenizer, what `--init` and a run's start from a
 * file read, and the CLI's `sft --out` writes.)
 */
import type { EnvSnapshot } from '../envs/types';
import { STATS_LENGTH } from '../models/optimizer';
import type { EnvRunState, RunEvent, TrainerState } from '../rl/trainer';
import { base64ToBytes, bytesToBase64 } from '../util/base64';
import {
  child,
  describeValue,
  expectInt,
  expectKeys,
  expectOneOf,
  expectRecord,
  expectSettings,
  expectString,
  ImportError,
  IMPORT_LIMITS,
  isRecord,
} from '../util/json-checks';
import type { AlgorithmInfo } from './run-protocol';

export const RUN_CHECKPOINT_VERSION = 1;

export interface RunCheckpoint {
  version: typeof RUN_CHECKPOINT_VERSION;
  /** Updates done when it was taken. */
  step: number;
  /** Where it was taken: resumed on the other backend, the run goes on, but not bit for bit. */
  backend: 'webgpu' | 'cpu';
  /** (layout.total) each: weights, AdamW first and second moments; stats as OptimizerSnapshot. */
  policy: { params: Float32Array; m: Float32Array; v: Float32Array; stats: Float32Array };
  /** (layout.total) the reference's weights, when the run has a reference. */
  reference?: Float32Array;
  /** The trained reward model (its layout has a value head) and its score normalization. */
  rewardModel?: { params: Float32Array; mean: number; std: number };
  trainer: TrainerState;
}

const isStep = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * What is wrong with `value` as a checkpoint of this version, or undefined. Never throws. The lab
 * reads stored checkpoints with it, and the run host refuses one that fails it before building
 * any model.
 */
export function checkpointProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'is not an object';
  if (value.version !== RUN_CHECKPOINT_VERSION) {
    return `version ${String(value.version)} is not ${RUN_CHECKPOINT_VERSION}`;
  }
  const { step, backend, policy, reference, rewardModel, trainer } = value;
  if (!isStep(step)) return `step must be a whole number ≥ 0, got ${String(step)}`;
  if (backend !== 'webgpu' && backend !== 'cpu') {
    return `backend must be webgpu or cpu, got ${String(backend)}`;
  }
  if (!isRecord(policy)) return 'policy is missing';
  if (!isRecord(trainer)) return 'trainer is missing';
  const { params, m, v, stats } = policy;
  if (!(params instanceof Float32Array) || params.length === 0) {
    return 'policy.params must be a non-empty Float32Array';
  }
  const sameLength: [string, unknown][] = [
    ['policy.m', m],
    ['policy.v', v],
    ...(reference === undefined ? [] : [['reference', reference] as [string, unknown]]),
  ];
  for (const [name, values] of sameLength) {
    if (!(values instanceof Float32Array) || values.length !== params.length) {
      return `${name} must be a Float32Array of ${params.length} values, as policy.params`;
    }
  }
  if (!(stats instanceof Float32Array)) return 'policy.stats must be a Float32Array';
  if (rewardModel !== undefined) {
    if (!isRecord(rewardModel)) return 'rewardModel must be an object';
    if (!(rewardModel.params instanceof Float32Array) || rewardModel.params.length === 0) {
      return 'rewardModel.params must be a non-empty Float32Array';
    }
    const { mean, std } = rewardModel;
    if (typeof mean !== 'number' || !Number.isFinite(mean)) {
      return `rewardModel.mean must be a finite number, got ${String(mean)}`;
    }
    if (typeof std !== 'number' || !Number.isFinite(std) || std <= 0) {
      return `rewardModel.std must be a finite number > 0, got ${String(std)}`;
    }
  }
  if (typeof trainer.algorithm !== 'string') return 'trainer.algorithm must be a name';
  if (trainer.step !== step) {
    return `its trainer is at update ${String(trainer.step)}, not ${step}`;
  }
  if (!isRecord(trainer.config)) return 'trainer.config must be an object';
  if (!Array.isArray(trainer.events)) return 'trainer.events must be a list';
  return undefined;
}

/**
 * A stored IndexedDB record as a checkpoint of this version, or undefined (with no throw) when it
 * is not one: a record comes from an earlier visit, maybe from an older lab, and must never crash
 * this one.
 */
export function checkpointFromRecord(value: unknown): RunCheckpoint | undefined {
  return checkpointProblem(value) === undefined ? (value as RunCheckpoint) : undefined;
}

/** `T` with every Float32Array as the base64 of its little-endian float32 bytes. */
type Base64Floats<T> = T extends Float32Array
  ? string
  : T extends object
    ? { [K in keyof T]: Base64Floats<T[K]> }
    : T;

/** The checkpoint as JSON (RunCheckpoint, its float arrays as base64 text; the trainer's state is JSON already). */
export type JsonCheckpoint = Base64Floats<Omit<RunCheckpoint, 'trainer'>> & {
  trainer: TrainerState;
};

/** Most float values one array may hold (64 Mi floats, 256 MB: far above the lab's models). */
const MAX_FLOATS = 2 ** 26;
/** Most random streams and curriculum levels a trainer state may name. */
const MAX_STREAMS = 64;
/** Most observation values an environment trainer's state may hold (envs × observation size). */
const MAX_OBSERVATIONS = 1 << 20;

export function checkpointToJson(checkpoint: RunCheckpoint): JsonCheckpoint {
  const { policy, reference, rewardModel } = checkpoint;
  return {
    version: checkpoint.version,
    step: checkpoint.step,
    backend: checkpoint.backend,
    policy: {
      params: floatsToBase64(policy.params),
      m: floatsToBase64(policy.m),
      v: floatsToBase64(policy.v),
      stats: floatsToBase64(policy.stats),
    },
    ...(reference ? { reference: floatsToBase64(reference) } : {}),
    ...(rewardModel
      ? {
          rewardModel: {
            params: floatsToBase64(rewardModel.params),
            mean: rewardModel.mean,
            std: rewardModel.std,
          },
        }
      : {}),
    trainer: checkpoint.trainer, // JSON already: serialized with the file around it
  };
}

/** What reading a checkpoint needs of the file around it. */
export interface CheckpointContext {
  algo: AlgorithmInfo;
  /** Updates the file's metrics cover: a checkpoint taken after them cannot be resumed from. */
  updates: number;
  /** The lab-run reader's event check, here at `path` with steps up to `updates`. */
  readEvents: (value: unknown, path: string, updates: number) => RunEvent[];
}

/** Reads `value` (at JSON path `path`) as a checkpoint, or throws an ImportError naming the field. */
export function checkpointFromJson(
  value: unknown,
  path: string,
  context: CheckpointContext,
): RunCheckpoint {
  if (!context.algo.checkpoints) {
    throw new ImportError(
      path,
      `is only for runs that keep checkpoints (language models, ppo-mlp), not ${context.algo.name}`,
    );
  }
  const root = expectRecord(value, path);
  expectKeys(
    root,
    path,
    ['version', 'step', 'backend', 'policy', 'trainer'],
    ['reference', 'rewardModel'],
  );
  if (root.version !== RUN_CHECKPOINT_VERSION) {
    throw new ImportError(
      child(path, 'version'),
      `must be ${RUN_CHECKPOINT_VERSION}, got ${describeValue(root.version)}`,
    );
  }
  const step = expectInt(root.step, child(path, 'step'), 0, context.updates);
  const backend = expectOneOf(root.backend, child(path, 'backend'), ['webgpu', 'cpu'] as const);

  const at = child(path, 'policy');
  const policyJson = expectRecord(root.policy, at);
  expectKeys(policyJson, at, ['params', 'm', 'v', 'stats']);
  const params = readFloats(policyJson.params, child(at, 'params'));
  const count = params.length;
  const policy = {
    params,
    m: readFloats(policyJson.m, child(at, 'm'), count),
    v: readFloats(policyJson.v, child(at, 'v'), count, 0),
    stats: readFloats(policyJson.stats, child(at, 'stats'), STATS_LENGTH),
  };
  const checkpoint: RunCheckpoint = {
    version: RUN_CHECKPOINT_VERSION,
    step,
    backend,
    policy,
    trainer: readTrainerState(root.trainer, child(path, 'trainer'), step, context),
  };
  if (root.reference !== undefined) {
    checkpoint.reference = readFloats(root.reference, child(path, 'reference'), count);
  }
  if (root.rewardModel !== undefined) {
    checkpoint.rewardModel = readRewardModel(root.rewardModel, child(path, 'rewardModel'));
  }
  // The shape check the lab and the worker share, as the last word.
  const problem = checkpointProblem(checkpoint);
  if (problem) throw new ImportError(path, problem);
  return checkpoint;
}

function floatsToBase64(values: Float32Array): string {
  // The lab's targets are all little-endian, as are typed arrays on them.
  return bytesToBase64(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}

/**
 * Base64 float32 bytes → a Float32Array of finite values (`length` of them when given), each at
 * least `min` when given (AdamW's second moment is never negative).
 */
function readFloats(value: unknown, path: string, length?: number, min?: number): Float32Array {
  const text = expectString(value, path, Math.ceil((MAX_FLOATS * 4) / 3) + 4);
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(text);
  } catch (error) {
    throw new ImportError(path, `must be base64 (${(error as Error).message})`);
  }
  if (bytes.length % 4 !== 0) {
    throw new ImportError(path, `must hold whole float32 values, got ${bytes.length} bytes`);
  }
  const floats = new Float32Array(
    bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
  );
  if (length !== undefined && floats.length !== length) {
    throw new ImportError(path, `must hold ${length} values, got ${floats.length}`);
  }
  for (let i = 0; i < floats.length; i++) {
    const v = floats[i]!;
    if (!Number.isFinite(v) || (min !== undefined && v < min)) {
      const want = min === undefined ? 'finite' : `finite and ≥ ${min}`;
      throw new ImportError(child(path, i), `must be ${want}, got ${v}`);
    }
  }
  return floats;
}

function readRewardModel(value: unknown, path: string): NonNullable<RunCheckpoint['rewardModel']> {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['params', 'mean', 'std']);
  const { mean, std } = json;
  if (typeof mean !== 'number' || !Number.isFinite(mean)) {
    throw new ImportError(
      child(path, 'mean'),
      `must be a finite number, got ${describeValue(mean)}`,
    );
  }
  if (typeof std !== 'number' || !Number.isFinite(std) || std <= 0) {
    throw new ImportError(child(path, 'std'), `must be a number > 0, got ${describeValue(std)}`);
  }
  return { params: readFloats(json.params, child(path, 'params')), mean, std };
}

function readTrainerState(
  value: unknown,
  path: string,
  step: number,
  context: CheckpointContext,
): TrainerState {
  const { algo } = context;
  const json = expectRecord(value, path);
  expectKeys(
    json,
    path,
    ['algorithm', 'step', 'config', 'events', 'health', 'skippedInARow', 'random'],
    algo.family === 'env' ? ['env'] : ['curriculum'],
  );
  expectOneOf(json.algorithm, child(path, 'algorithm'), [algo.name]);
  expectInt(json.step, child(path, 'step'), step, step);
  const state: TrainerState = {
    algorithm: algo.name,
    step,
    config: expectSettings(json.config, child(path, 'config'), algo, false),
    events: context.readEvents(json.events, child(path, 'events'), step),
    health: readHealth(json.health, child(path, 'health')),
    skippedInARow: expectInt(json.skippedInARow, child(path, 'skippedInARow'), 0, step),
    random: readDraws(json.random, child(path, 'random')),
  };
  if (json.curriculum !== undefined) {
    const at = child(path, 'curriculum');
    const curriculum = expectRecord(json.curriculum, at);
    expectKeys(curriculum, at, ['level', 'streak']);
    state.curriculum = {
      level: expectInt(curriculum.level, child(at, 'level'), 0, MAX_STREAMS),
      streak: expectInt(curriculum.streak, child(at, 'streak'), 0, step),
    };
  }
  if (json.env !== undefined) state.env = readEnvRunState(json.env, child(path, 'env'));
  return state;
}

/**
 * An environment trainer's envs (PPO on CartPole). The numbers are checked here; the vector env's
 * snapshot is JSON already (the file was parsed), and the envs check every field of it when the
 * run is built, refusing the checkpoint (the lab then replays) if one does not fit.
 */
function readEnvRunState(value: unknown, path: string): EnvRunState {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['globalStep', 'seconds', 'nextObs', 'vector']);
  const seconds = json.seconds;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
    throw new ImportError(
      child(path, 'seconds'),
      `must be a number ≥ 0, got ${describeValue(seconds)}`,
    );
  }
  const at = child(path, 'nextObs');
  const obs = json.nextObs;
  if (!Array.isArray(obs) || obs.length > MAX_OBSERVATIONS) {
    throw new ImportError(at, `must be a list of at most ${MAX_OBSERVATIONS} numbers`);
  }
  obs.forEach((x, i) => {
    if (typeof x !== 'number' || !Number.isFinite(x)) {
      throw new ImportError(child(at, i), `must be a finite number, got ${describeValue(x)}`);
    }
  });
  return {
    globalStep: expectInt(json.globalStep, child(path, 'globalStep'), 0, Number.MAX_SAFE_INTEGER),
    seconds,
    nextObs: obs as number[],
    vector: expectRecord(json.vector, child(path, 'vector')) as EnvSnapshot,
  };
}

function readHealth(value: unknown, path: string): TrainerState['health'] {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['healthy'], ['reason']);
  if (typeof json.healthy !== 'boolean') {
    throw new ImportError(
      child(path, 'healthy'),
      `must be true or false, got ${describeValue(json.healthy)}`,
    );
  }
  return json.reason === undefined
    ? { healthy: json.healthy }
    : {
        healthy: json.healthy,
        reason: expectString(json.reason, child(path, 'reason'), IMPORT_LIMITS.maxTextLength),
      };
}

/** Random stream name → draws taken (whole numbers; the worker checks the names). */
function readDraws(value: unknown, path: string): Record<string, number> {
  const json = expectRecord(value, path);
  const names = Object.keys(json);
  if (names.length > MAX_STREAMS) {
    throw new ImportError(path, `must name at most ${MAX_STREAMS} streams, got ${names.length}`);
  }
  // fromEntries: a stream named "__proto__" stays a name (the worker refuses names it lacks).
  return Object.fromEntries(
    names.map((name) => {
      expectString(name, path, IMPORT_LIMITS.maxNameLength);
      return [name, expectInt(json[name], child(path, name), 0, Number.MAX_SAFE_INTEGER)];
    }),
  );
}
