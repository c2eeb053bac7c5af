/**
 * A comparison in the URL, so a link reproduces it: the runs' algorithm, task, seed and the
 * settings that differ from the algorithm's defaults, as compact JSON → UTF-8 → base64url behind a
 * version prefix — `#/lab?compare=v1.W3siYSI6…` (parseRoute ignores what follows '?').
 *
 *   [{ "a": "grpo", "t": "reverse", "s": 1, "c": { "lr": 0.01 }, "w": 100 }, …]
 *      a algorithm, t task, s seed, c settings ≠ default (omitted when none), w warm-up steps
 *      (language models, omitted when not set); o task options ≠ default, i shipped start model,
 *      u curriculum [threshold, patience], r reward model [prompts, samplesPerPrompt, labelNoise,
 *      steps, pairsPerStep, lr], k retained task { t: task, o?: its options }, p positions of a
 *      new model ('learned' or 'rotary'; learned when absent, as in every link from before)
 *      (each omitted when not set)
 *
 * A link is untrusted input: decoding checks every field the way a run import does (known
 * algorithm and task, integer seed, each setting through its FieldSpec, no unknown keys) and throws
 * a UrlStateError naming the run index and the field ("runs[1].config.lr: must be a number in
 * (0, 1], got 2"). Links longer than URL_STATE_MAX_LENGTH are refused on both sides.
 */
import { jsonDepthProblem } from '../util/json-depth';
import { splitHash } from '../util/hash-query';
import { base64ToBytes, bytesToBase64 } from '../util/base64';
import {
  expectCurriculum,
  expectLanguageModel,
  expectModelName,
  expectRetained,
  expectRewardModel,
  expectTaskOptions,
} from './json-checks';
import {
  child,
  describeValue,
  expectInt,
  expectOneOf,
  expectRecord,
  expectSettings,
  ImportError,
} from '../util/json-checks';
import { POSITION_KINDS, type PositionKind } from '../models/transformer-config';
import type { CurriculumConfig } from '../rl/curriculum';
import type { RewardModelConfig } from '../rl/reward-model';
import type { RetainedTaskSpec } from '../worker/run-protocol';
import { findAlgorithm, tasksFor, type CompareCatalog, type Settings } from './run-record';
import { errorText } from '../util/error-text';

/** The hash query parameter that carries a comparison. */
export const URL_STATE_PARAM = 'compare';
export const URL_STATE_VERSION = 'v1';
/** Most characters of the parameter's value (browsers and chat apps cut long links). */
export const URL_STATE_MAX_LENGTH = 2000;
/** Most runs in one link. */
export const MAX_LINKED_RUNS = 16;
const MAX_SEED = 2 ** 31 - 1;

/** One run of a comparison: enough to create it again. */
export interface LinkedRun {
  algorithm: string;
  task: string;
  seed: number;
  /** Every setting (defaults filled in). */
  config: Settings;
  /** Language models: warm-up steps, when not the default. */
  sftSteps?: number;
  /** Language models: the task's options that differ from its defaults. */
  taskOptions?: Settings;
  /**
   * Language models: the shipped checkpoint the run starts from. (A run started from a user's
   * own file cannot travel in a link: it goes without, and the share panel says so.)
   */
  init?: { kind: 'shipped'; model: string };
  /** Language models started from a new model: how it knows positions ('learned' when absent). */
  positions?: PositionKind;
  /** Language models: the run trains through its task's curriculum. */
  curriculum?: CurriculumConfig;
  /** Language models: before RL the run trains a reward model with these settings. */
  rewardModel?: RewardModelConfig;
  /** Language models: the second task the run keeps (ptx and retained/success_rate). */
  retained?: RetainedTaskSpec;
}

/** A link that cannot be made or read; `run` is the index of the run at fault, if one is. */
export class UrlStateError extends ImportError {
  override readonly name = 'UrlStateError';
  constructor(
    path: string,
    problem: string,
    readonly run?: number,
  ) {
    super(path, problem);
  }
}

/** Compact form of one run (see the module comment). */
interface CompactRun {
  a: string;
  t: string;
  s: number;
  c?: Settings;
  w?: number;
  o?: Settings;
  i?: string;
  /** Curriculum: [threshold, patience]. */
  u?: [number, number];
  /** Reward model: its settings in REWARD_MODEL_ORDER. */
  r?: number[];
  /** Retained task: its name and options, as RunSpec.retained holds them (t, o). */
  k?: { t: string; o?: Settings };
  /** Positions of a new model. */
  p?: string;
}

/** Curriculum settings in the order a link's `u` array holds them. */
const CURRICULUM_ORDER = [
  'threshold',
  'patience',
] as const satisfies readonly (keyof CurriculumConfig)[];

/** Reward-model settings in the order a link's `r` array holds them (fixed: links must last). */
const REWARD_MODEL_ORDER = [
  'prompts',
  'samplesPerPrompt',
  'labelNoise',
  'steps',
  'pairsPerStep',
  'lr',
] as const satisfies readonly (keyof RewardModelConfig)[];

const FIELD_NAMES: Record<keyof CompactRun, string> = {
  a: 'algorithm',
  t: 'task',
  s: 'seed',
  c: 'config',
  w: 'sftSteps',
  o: 'taskOptions',
  i: 'init',
  u: 'curriculum',
  r: 'rewardModel',
  k: 'retained',
  p: 'positions',
};

/**
 * The parameter value for `runs` ('v1.' + base64url). Throws a UrlStateError when a run is
 * invalid (the same checks as decoding, so every link made can be read) or the link would be too
 * long.
 */
export function encodeComparison(runs: readonly LinkedRun[], catalog: CompareCatalog): string {
  const compact = runs.map((run, i): CompactRun => {
    const algo = findAlgorithm(catalog, run.algorithm);
    const diff: Settings = {};
    if (algo) {
      for (const key of Object.keys(algo.spec)) {
        const value = run.config[key];
        // -0 and 0 are one setting; JSON would turn -0 into 0 anyway.
        if (value !== undefined && value !== algo.defaults[key]) {
          diff[key] = typeof value === 'number' ? value + 0 : value;
        }
      }
    }
    // Keys the spec does not know are kept, so the check below reports them.
    for (const key of Object.keys(run.config)) {
      if (!algo || !Object.hasOwn(algo.spec, key)) diff[key] = run.config[key]!;
    }
    const out: CompactRun = { a: run.algorithm, t: run.task, s: run.seed };
    if (Object.keys(diff).length > 0) out.c = diff;
    if (run.sftSteps !== undefined) out.w = run.sftSteps;
    if (run.taskOptions !== undefined && Object.keys(run.taskOptions).length > 0) {
      out.o = run.taskOptions;
    }
    if (run.init !== undefined) out.i = run.init.model;
    if (run.positions !== undefined) out.p = run.positions;
    if (run.curriculum !== undefined) {
      out.u = [run.curriculum.threshold, run.curriculum.patience];
    }
    if (run.rewardModel !== undefined) {
      const settings = run.rewardModel;
      // -0 and 0 are one setting; JSON would turn -0 into 0 anyway.
      out.r = REWARD_MODEL_ORDER.map((key) => settings[key] + 0);
    }
    if (run.retained !== undefined) {
      const { task, taskOptions } = run.retained;
      out.k = taskOptions === undefined ? { t: task } : { t: task, o: taskOptions };
    }
    // Every field must pass the decoder's checks, and the full config must be the one given.
    const read = readRun(out, i, catalog);
    for (const key of Object.keys(read.config)) {
      if (!Object.hasOwn(run.config, key)) {
        throw new UrlStateError(child(child(`runs[${i}]`, 'config'), key), 'is missing', i);
      }
    }
    return out;
  });
  checkRunCount(compact.length);
  const token = `${URL_STATE_VERSION}.${bytesToBase64(new TextEncoder().encode(JSON.stringify(compact)), 'url')}`;
  if (token.length > URL_STATE_MAX_LENGTH) {
    throw new UrlStateError(
      '(link)',
      `would be ${token.length} characters; a link holds at most ${URL_STATE_MAX_LENGTH} — ` +
        'compare fewer runs or fewer changed settings',
    );
  }
  return token;
}

/** The runs of a parameter value made by encodeComparison; throws UrlStateError otherwise. */
export function decodeComparison(token: string, catalog: CompareCatalog): LinkedRun[] {
  if (typeof token !== 'string' || token.length > URL_STATE_MAX_LENGTH) {
    throw new UrlStateError(
      '(link)',
      `must be text of at most ${URL_STATE_MAX_LENGTH} characters, got ${typeof token === 'string' ? `${token.length} characters` : describeValue(token)}`,
    );
  }
  const prefix = `${URL_STATE_VERSION}.`;
  if (!token.startsWith(prefix)) {
    const version = /^(v\d+)\./.exec(token)?.[1];
    throw new UrlStateError(
      '(link)',
      version
        ? `is version ${version}; this lab reads ${URL_STATE_VERSION}`
        : `must start with '${prefix}'`,
    );
  }
  let json: unknown;
  try {
    const bytes = base64ToBytes(token.slice(prefix.length), 'url');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    const tooDeep = jsonDepthProblem(text);
    if (tooDeep) throw new Error(tooDeep);
    json = JSON.parse(text);
  } catch (error) {
    const why = errorText(error);
    throw new UrlStateError('(link)', `is damaged (${why})`);
  }
  if (!Array.isArray(json)) {
    throw new UrlStateError('runs', `must be a list of runs, got ${describeValue(json)}`);
  }
  checkRunCount(json.length);
  return json.map((item, i) => readRun(item, i, catalog));
}

/** The comparison in a location hash such as '#/lab?compare=v1.…', or undefined when none. */
export function comparisonFromHash(hash: string, catalog: CompareCatalog): LinkedRun[] | undefined {
  const token = splitHash(hash).params.get(URL_STATE_PARAM);
  return token === null ? undefined : decodeComparison(token, catalog);
}

/** `hash` with the comparison parameter set to `token` (removed when undefined), route kept. */
export function hashWithComparison(hash: string, token: string | undefined): string {
  const { path: route, params } = splitHash(hash);
  if (token === undefined) params.delete(URL_STATE_PARAM);
  else params.set(URL_STATE_PARAM, token);
  const query = params.toString();
  return query ? `${route || '#/'}?${query}` : route;
}

function checkRunCount(count: number): void {
  if (count < 1 || count > MAX_LINKED_RUNS) {
    throw new UrlStateError('runs', `must hold 1 to ${MAX_LINKED_RUNS} runs, got ${count}`);
  }
}

/** Checks one compact run and expands it (defaults + diff); errors name runs[i] and the field. */
function readRun(value: unknown, index: number, catalog: CompareCatalog): LinkedRun {
  const path = `runs[${index}]`;
  const at = (key: keyof CompactRun) => child(path, FIELD_NAMES[key]);
  try {
    const run = expectRecord(value, path);
    for (const key of Object.keys(run)) {
      if (!Object.hasOwn(FIELD_NAMES, key)) {
        const known = Object.entries(FIELD_NAMES)
          .map(([k, name]) => `${k} (${name})`)
          .join(', ');
        throw new ImportError(child(path, key), `is not a known field (known: ${known})`);
      }
    }
    for (const key of ['a', 't', 's'] as const) {
      if (!Object.hasOwn(run, key)) throw new ImportError(at(key), 'is missing');
    }
    const names = catalog.algorithms.map((a) => a.name);
    const algo = findAlgorithm(catalog, expectOneOf(run.a, at('a'), names))!;
    const task = expectOneOf(run.t, at('t'), tasksFor(catalog, algo));
    const seed = expectInt(run.s, at('s'), 0, MAX_SEED);
    const diff = run.c === undefined ? {} : expectSettings(run.c, at('c'), algo, false);
    const linked: LinkedRun = {
      algorithm: algo.name,
      task,
      seed,
      config: { ...algo.defaults, ...diff },
    };
    if (run.w !== undefined) {
      expectLanguageModel(algo, at('w'));
      linked.sftSteps = expectInt(run.w, at('w'), catalog.sftSteps.min, catalog.sftSteps.max);
    }
    if (run.o !== undefined) {
      linked.taskOptions = expectTaskOptions(run.o, at('o'), algo, catalog, task);
    }
    if (run.i !== undefined) {
      expectLanguageModel(algo, at('i'));
      linked.init = { kind: 'shipped', model: expectModelName(run.i, at('i')) };
    }
    if (run.p !== undefined) {
      expectLanguageModel(algo, at('p'));
      // A shipped start brings its own positions; a choice beside it would be ignored.
      if (linked.init) {
        throw new ImportError(at('p'), 'is only for a run started from a new model (leave out i)');
      }
      linked.positions = expectOneOf(run.p, at('p'), POSITION_KINDS);
    }
    if (run.u !== undefined) {
      if (!algo.curriculum) {
        throw new ImportError(at('u'), `is not a setting of ${algo.name}`);
      }
      linked.curriculum = expectCurriculum(fromArray(run.u, at('u'), CURRICULUM_ORDER), at('u'));
    }
    if (run.r !== undefined) {
      if (!algo.rewardModel) {
        throw new ImportError(at('r'), `is not a setting of ${algo.name}`);
      }
      const named = fromArray(run.r, at('r'), REWARD_MODEL_ORDER);
      linked.rewardModel = expectRewardModel(named, at('r'));
    }
    if (run.k !== undefined) {
      // The compact keys back to RunSpec's, then the import's own check of a retained task.
      const compact = expectRecord(run.k, at('k'));
      for (const key of Object.keys(compact)) {
        if (key !== 't' && key !== 'o') {
          throw new ImportError(child(at('k'), key), 'is not a known field (known: t, o)');
        }
      }
      const spelled = {
        task: compact.t,
        ...(compact.o === undefined ? {} : { taskOptions: compact.o }),
      };
      linked.retained = expectRetained(spelled, at('k'), algo, catalog);
    }
    return linked;
  } catch (error) {
    if (error instanceof ImportError && !(error instanceof UrlStateError)) {
      throw new UrlStateError(error.path, error.problem, index);
    }
    throw error;
  }
}

/**
 * A settings group sent as an array of its values in the order `keys` gives, as an object keyed by
 * them (the values are the caller's to check). Throws when it is not an array of that length.
 */
function fromArray(value: unknown, path: string, keys: readonly string[]): Record<string, unknown> {
  if (!Array.isArray(value) || value.length !== keys.length) {
    throw new ImportError(path, `must be [${keys.join(', ')}], got ${describeValue(value)}`);
  }
  return Object.fromEntries(keys.map((key, i): [string, unknown] => [key, value[i]]));
}
