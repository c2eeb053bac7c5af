/**
 * A lab run as a file, and the importer for it. Export writes
 *
 *   { format: 'agent-rl-lab/lab-run', version: 1, exportedAt?, label?,
 *     spec: { algorithm, task, seed, config, taskOptions?, backend?, sftSteps?, reference?,
 *             init?: { shipped: name } | { file: name, bytes: base64 },
 *             curriculum?: { threshold, patience },
 *             rewardModel?: { prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr },
 *             retained?: { task, taskOptions? } },
 *     metrics: { name: [value per update, …] },        NaN/±Infinity as "NaN", "Infinity", …
 *     events: [RunEvent, …],
 *     checkpoint?: the run's latest checkpoint (language models and ppo-mlp; src/compare/checkpoint-json.ts) }
 *
 * and import reads that or the CLI's run file (src/rl/run-file.ts, what `npm run train -- --out`
 * writes; its optional taskOptions, curriculum, rewardModel and retained sit at the top level, checked as
 * the lab-run spec's are). Import is a pure function of the text: JSON.parse inside try, then
 * every field checked — types, sizes, numbers, the algorithm and task known, the config through
 * the algorithm's own FieldSpecs, series of equal length, events well-formed — and the first
 * problem thrown as an ImportError naming its JSON path. Nothing in a file is evaluated, and a refused file changes
 * nothing (there is no state here to change).
 */
import { BACKEND_CHOICES, type BackendChoice } from '../gpu/backend-choice';
import {
  copyRetained,
  type RetainedTaskSpec,
  type RunCheckpoint,
  type StartFrom,
} from '../worker/run-protocol';
import { base64ToBytes, bytesToBase64 } from './base64';
import { checkpointFromJson, checkpointToJson, type JsonCheckpoint } from './checkpoint-json';
import { TRANSFORMER_LIMITS, type ModelShape } from '../models/transformer-config';
import { jsonDepthProblem } from '../util/json-depth';
import type { CurriculumConfig } from '../rl/curriculum';
import type { RewardModelConfig } from '../rl/reward-model';
import {
  child,
  describeValue,
  expectInt,
  expectLanguageModel,
  expectCurriculum,
  expectKeys,
  expectModelName,
  expectOneOf,
  expectRecord,
  expectRetained,
  expectRewardModel,
  expectSettings,
  expectString,
  expectTaskOptions,
  ImportError,
  IMPORT_LIMITS,
} from './json-checks';
import {
  findAlgorithm,
  tasksFor,
  type AlgorithmInfo,
  type CompareCatalog,
  type RunEvent,
  type RunRecord,
  type Settings,
} from './run-record';

export { ImportError, IMPORT_LIMITS } from './json-checks';

export const LAB_RUN_FORMAT = 'agent-rl-lab/lab-run';
export const LAB_RUN_VERSION = 1;
/** The CLI's run file (src/rl/run-file.ts RUN_FILE_FORMAT / RUN_FILE_VERSION). */
export const CLI_RUN_FORMAT = 'agent-rl-lab/run';
export const CLI_RUN_VERSION = 1;

/** Largest seed (the worker's check of RunSpec.seed). */
export const MAX_SEED = 2 ** 31 - 1;

/** A metric value as JSON: a finite number, or a non-finite one spelled as a string. */
type JsonMetricValue = number | 'NaN' | 'Infinity' | '-Infinity';

export interface LabRunFile {
  format: typeof LAB_RUN_FORMAT;
  version: typeof LAB_RUN_VERSION;
  exportedAt?: string;
  label?: string;
  spec: {
    algorithm: string;
    task: string;
    seed: number;
    config: Settings;
    taskOptions?: Settings;
    backend?: BackendChoice;
    sftSteps?: number;
    reference?: 'engine' | 'ort';
    init?: { shipped: string } | { file: string; bytes: string };
    curriculum?: CurriculumConfig;
    rewardModel?: RewardModelConfig;
    retained?: RetainedTaskSpec;
  };
  metrics: Record<string, JsonMetricValue[]>;
  events: RunEvent[];
  checkpoint?: JsonCheckpoint;
}

/** A run to export: the run record plus what the lab keeps beside it. */
export interface LabRunExport extends RunRecord {
  label?: string;
  /** Language models: the task's options (only those set; defaults fill the rest). */
  taskOptions?: Settings;
  backend?: BackendChoice;
  sftSteps?: number;
  /** Language models: the engine that scored the frozen reference ('engine' when left out). */
  reference?: 'engine' | 'ort';
  /** Language models: the saved weights the run started from (else a random initialization). */
  init?: StartFrom;
  /** Language models: the run trained through its task's curriculum, moving up so. */
  curriculum?: CurriculumConfig;
  /** Language models: before RL the run trained a reward model with these settings. */
  rewardModel?: RewardModelConfig;
  /** Language models: the second task the run kept (ptx and retained/success_rate). */
  retained?: RetainedTaskSpec;
  /** Language models and ppo-mlp: the run's latest checkpoint, taken at or before its last update. */
  checkpoint?: RunCheckpoint;
  /** ISO time; left out when not given (keeps exports reproducible in tests). */
  exportedAt?: string;
}

/** An imported run: a RunRecord for the compare view, plus what the file carried beside it. */
export interface ImportedRun extends RunRecord {
  /** Which file format it came from. */
  source: 'lab-run' | 'cli-run';
  label?: string;
  taskOptions?: Settings;
  backend?: BackendChoice;
  sftSteps?: number;
  reference?: 'engine' | 'ort';
  init?: StartFrom;
  curriculum?: CurriculumConfig;
  rewardModel?: RewardModelConfig;
  retained?: RetainedTaskSpec;
  checkpoint?: RunCheckpoint;
  exportedAt?: string;
  /** CLI run files only: the backend description, creation time and summary the CLI wrote. */
  cli?: {
    backend: string;
    createdAt: string;
    summary: Record<string, number | string>;
    /** Language models: the transformer's trunk the CLI trained (files from before lack it). */
    model?: ModelShape;
  };
}

/** The run as lab-run JSON (compact; non-finite metric values as strings). */
export function exportLabRun(run: LabRunExport): string {
  const file: LabRunFile = {
    format: LAB_RUN_FORMAT,
    version: LAB_RUN_VERSION,
    ...(run.exportedAt === undefined ? {} : { exportedAt: run.exportedAt }),
    ...(run.label === undefined ? {} : { label: run.label }),
    spec: {
      algorithm: run.algorithm,
      task: run.task,
      seed: run.seed,
      config: run.config,
      ...(run.taskOptions === undefined ? {} : { taskOptions: run.taskOptions }),
      ...(run.backend === undefined ? {} : { backend: run.backend }),
      ...(run.sftSteps === undefined ? {} : { sftSteps: run.sftSteps }),
      ...(run.reference === undefined ? {} : { reference: run.reference }),
      ...(run.init === undefined ? {} : { init: initToJson(run.init) }),
      ...(run.curriculum === undefined ? {} : { curriculum: { ...run.curriculum } }),
      ...(run.rewardModel === undefined ? {} : { rewardModel: { ...run.rewardModel } }),
      ...(run.retained === undefined ? {} : { retained: copyRetained(run.retained) }),
    },
    metrics: Object.fromEntries(
      Object.entries(run.metrics).map(([name, values]) => [name, values.map(jsonMetricValue)]),
    ),
    events: run.events,
    ...(run.checkpoint === undefined ? {} : { checkpoint: checkpointToJson(run.checkpoint) }),
  };
  return JSON.stringify(file);
}

function jsonMetricValue(v: number): JsonMetricValue {
  return Number.isFinite(v) ? v : (String(v) as JsonMetricValue);
}

/**
 * Reads a lab-run file or a CLI run file. Returns the run, or throws an ImportError naming the
 * JSON path of the first bad value (e.g. "metrics['reward/mean'][12]: must be a number or "NaN",
 * got true").
 */
export function parseLabRun(text: string, catalog: CompareCatalog): ImportedRun {
  if (typeof text !== 'string') {
    throw new ImportError('(file)', `must be text, got ${describeValue(text)}`);
  }
  if (text.length > IMPORT_LIMITS.maxChars) {
    throw new ImportError(
      '(file)',
      `is ${text.length.toLocaleString('en')} characters; the limit is ` +
        `${IMPORT_LIMITS.maxChars.toLocaleString('en')} (about 20 MB)`,
    );
  }
  // Before parsing: a deep bomb costs JSON.parse seconds and its result overflows later copies.
  const tooDeep = jsonDepthProblem(text);
  if (tooDeep) throw new ImportError('(file)', tooDeep);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new ImportError('(file)', `is not valid JSON (${why})`);
  }
  const root = expectRecord(json, '');
  const format = expectOneOf(root.format, 'format', [LAB_RUN_FORMAT, CLI_RUN_FORMAT]);
  if (root.version !== 1) {
    const known = format === LAB_RUN_FORMAT ? LAB_RUN_VERSION : CLI_RUN_VERSION;
    throw new ImportError(
      'version',
      `must be ${known} (the version this lab reads), got ${describeValue(root.version)}`,
    );
  }
  return format === LAB_RUN_FORMAT ? readLabRun(root, catalog) : readCliRun(root, catalog);
}

function readLabRun(root: Record<string, unknown>, catalog: CompareCatalog): ImportedRun {
  expectKeys(
    root,
    '',
    ['format', 'version', 'spec', 'metrics', 'events'],
    ['exportedAt', 'label', 'checkpoint'],
  );
  const spec = expectRecord(root.spec, 'spec');
  expectKeys(
    spec,
    'spec',
    ['algorithm', 'task', 'seed', 'config'],
    [
      'taskOptions',
      'backend',
      'sftSteps',
      'reference',
      'init',
      'curriculum',
      'rewardModel',
      'retained',
    ],
  );
  const algo = knownAlgorithm(spec.algorithm, 'spec.algorithm', catalog);
  const task = expectOneOf(spec.task, 'spec.task', tasksFor(catalog, algo));
  const seed = expectInt(spec.seed, 'spec.seed', 0, MAX_SEED);
  const config = expectSettings(spec.config, 'spec.config', algo, true);
  const run: ImportedRun = {
    source: 'lab-run',
    algorithm: algo.name,
    task,
    seed,
    config,
    metrics: {},
    events: [],
  };
  if (spec.taskOptions !== undefined) {
    run.taskOptions = expectTaskOptions(spec.taskOptions, 'spec.taskOptions', algo, catalog, task);
  }
  if (spec.backend !== undefined) {
    run.backend = expectOneOf(spec.backend, 'spec.backend', BACKEND_CHOICES);
  }
  Object.assign(run, readStart(spec, 'spec.', algo, catalog));
  if (spec.reference !== undefined) {
    expectLanguageModel(algo, 'spec.reference');
    run.reference = expectOneOf(spec.reference, 'spec.reference', ['engine', 'ort'] as const);
  }
  Object.assign(run, readTrainingGroups(spec, 'spec.', algo, catalog));
  run.metrics = readMetrics(root.metrics);
  run.events = readEvents(root.events, algo, seriesLength(run.metrics), 'lab-run');
  if (root.exportedAt !== undefined) {
    run.exportedAt = expectString(root.exportedAt, 'exportedAt', 100);
  }
  if (root.label !== undefined) {
    run.label = expectString(root.label, 'label', IMPORT_LIMITS.maxTextLength, true);
  }
  if (root.checkpoint !== undefined) {
    run.checkpoint = checkpointFromJson(root.checkpoint, 'checkpoint', {
      algo,
      updates: seriesLength(run.metrics),
      readEvents: (value, path, updates) => readEvents(value, algo, updates, 'lab-run', path),
    });
  }
  return run;
}

/**
 * Where a language-model run started, where a file says (a lab-run file under `spec.`, a CLI run
 * file at its top level): its warm-up's SFT steps, and the weights it started from; refused for
 * algorithms without them.
 */
function readStart(
  from: Record<string, unknown>,
  prefix: string,
  algo: AlgorithmInfo,
  catalog: CompareCatalog,
): Pick<ImportedRun, 'sftSteps' | 'init'> {
  const out: Pick<ImportedRun, 'sftSteps' | 'init'> = {};
  for (const key of ['sftSteps', 'init'] as const) {
    if (from[key] !== undefined) expectLanguageModel(algo, prefix + key);
  }
  if (from.sftSteps !== undefined) {
    const { min, max } = catalog.sftSteps;
    out.sftSteps = expectInt(from.sftSteps, `${prefix}sftSteps`, min, max);
  }
  if (from.init !== undefined) out.init = readInit(from.init, `${prefix}init`);
  return out;
}

/**
 * A language-model run's curriculum, reward-model settings and retained task, where a file holds
 * them (a lab-run file under `spec.`, a CLI run file at its top level); refused for algorithms
 * without them.
 */
function readTrainingGroups(
  from: Record<string, unknown>,
  prefix: string,
  algo: AlgorithmInfo,
  catalog: CompareCatalog,
): Pick<ImportedRun, 'curriculum' | 'rewardModel' | 'retained'> {
  const out: Pick<ImportedRun, 'curriculum' | 'rewardModel' | 'retained'> = {};
  if (from.retained !== undefined) {
    out.retained = expectRetained(from.retained, `${prefix}retained`, algo, catalog);
  }
  if (from.curriculum !== undefined) {
    if (!algo.curriculum) {
      throw new ImportError(`${prefix}curriculum`, `is not a setting of ${algo.name}`);
    }
    out.curriculum = expectCurriculum(from.curriculum, `${prefix}curriculum`);
  }
  if (from.rewardModel !== undefined) {
    if (!algo.rewardModel) {
      throw new ImportError(`${prefix}rewardModel`, `is not a setting of ${algo.name}`);
    }
    out.rewardModel = expectRewardModel(from.rewardModel, `${prefix}rewardModel`);
  }
  return out;
}

function readCliRun(root: Record<string, unknown>, catalog: CompareCatalog): ImportedRun {
  expectKeys(
    root,
    '',
    [
      'format',
      'version',
      'algorithm',
      'task',
      'seed',
      'backend',
      'createdAt',
      'config',
      'metrics',
      'events',
      'summary',
    ],
    // Language-model runs, as a lab-run file's spec carries them (files from before lack them).
    ['taskOptions', 'curriculum', 'rewardModel', 'retained', 'sftSteps', 'init', 'model'],
  );
  const algo = knownAlgorithm(root.algorithm, 'algorithm', catalog);
  const task = cliTask(root.task, algo, catalog);
  const seed = expectInt(root.seed, 'seed', 0, MAX_SEED);
  const backend = expectString(root.backend, 'backend', IMPORT_LIMITS.maxTextLength);
  const createdAt = expectString(root.createdAt, 'createdAt', 100);
  const config = expectSettings(root.config, 'config', algo, true);
  const run: ImportedRun = {
    source: 'cli-run',
    algorithm: algo.name,
    task,
    seed,
    config,
    metrics: {},
    events: [],
  };
  if (root.taskOptions !== undefined) {
    run.taskOptions = expectTaskOptions(root.taskOptions, 'taskOptions', algo, catalog, task);
  }
  Object.assign(
    run,
    readTrainingGroups(root, '', algo, catalog),
    readStart(root, '', algo, catalog),
  );
  run.metrics = readMetrics(root.metrics);
  run.events = readEvents(root.events, algo, seriesLength(run.metrics), 'cli-run');
  const summary = readSummary(root.summary);
  run.cli = { backend, createdAt, summary };
  if (root.model !== undefined) {
    expectLanguageModel(algo, 'model');
    run.cli.model = readModelShape(root.model, 'model');
  }
  return run;
}

/** A transformer trunk's size, each within the model's limits. */
function readModelShape(value: unknown, path: string): ModelShape {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['width', 'layers', 'heads']);
  const [width, layers, heads] = (['width', 'layers', 'heads'] as const).map((key) => {
    const [min, max] = TRANSFORMER_LIMITS[key];
    return expectInt(json[key], child(path, key), min, max);
  }) as [number, number, number];
  return { width, layers, heads };
}

function knownAlgorithm(value: unknown, path: string, catalog: CompareCatalog): AlgorithmInfo {
  const names = catalog.algorithms.map((a) => a.name);
  const name = expectOneOf(value, path, names);
  return findAlgorithm(catalog, name)!;
}

/**
 * The CLI writes its progress label as the task: "q-learning on cliffwalking", "grpo on
 * reverse(2–6)" (the task's name with its options). A bare task name is accepted too.
 */
function cliTask(value: unknown, algo: AlgorithmInfo, catalog: CompareCatalog): string {
  const text = expectString(value, 'task', IMPORT_LIMITS.maxNameLength);
  const prefix = `${algo.name} on `;
  const rest = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  const name = algo.family === 'lm' ? rest.replace(/\(.*\)$/s, '') : rest;
  const known = tasksFor(catalog, algo);
  if (!known.includes(name)) {
    throw new ImportError(
      'task',
      `must name a task of ${algo.name} (${known.join(', ')}), got ${describeValue(text)}`,
    );
  }
  return name;
}

/** Metric names: printable, not starting with a spreadsheet formula character. */
const METRIC_NAME = /^[^\s=+\-@\p{Cc}][^\p{Cc}]*$/u;

function readMetrics(value: unknown): Record<string, number[]> {
  const object = expectRecord(value, 'metrics');
  const entries = Object.entries(object);
  if (entries.length > IMPORT_LIMITS.maxMetrics) {
    throw new ImportError(
      'metrics',
      `must have at most ${IMPORT_LIMITS.maxMetrics} series, got ${entries.length}`,
    );
  }
  // Shapes and the total size first, so a huge file is refused before its values are read.
  let points = 0;
  let first: { name: string; length: number } | undefined;
  for (const [name, series] of entries) {
    const at = child('metrics', name);
    if (
      name.length > IMPORT_LIMITS.maxNameLength ||
      !METRIC_NAME.test(name) ||
      name === '__proto__'
    ) {
      throw new ImportError(
        at,
        `is not a valid metric name (printable, at most ${IMPORT_LIMITS.maxNameLength} characters, ` +
          `not starting with a space, '=', '+', '-' or '@')`,
      );
    }
    if (!Array.isArray(series)) {
      throw new ImportError(at, `must be an array of values, got ${describeValue(series)}`);
    }
    if (first && series.length !== first.length) {
      throw new ImportError(
        at,
        `has ${series.length} values; every series must have one per update, as ` +
          `${child('metrics', first.name)} has ${first.length}`,
      );
    }
    first ??= { name, length: series.length };
    points += series.length;
    if (points > IMPORT_LIMITS.maxPoints) {
      throw new ImportError(
        'metrics',
        `must hold at most ${IMPORT_LIMITS.maxPoints.toLocaleString('en')} values in all`,
      );
    }
  }
  const out: [string, number[]][] = [];
  for (const [name, series] of entries as [string, unknown[]][]) {
    const at = child('metrics', name);
    out.push([name, series.map((v, i) => metricValue(v, child(at, i)))]);
  }
  return Object.fromEntries(out);
}

function metricValue(value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value === 'NaN') return NaN;
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  throw new ImportError(
    path,
    `must be a number or "NaN" ("Infinity", "-Infinity"), got ${describeValue(value)}`,
  );
}

function seriesLength(metrics: Record<string, number[]>): number {
  const first = Object.values(metrics)[0];
  return first ? first.length : 0;
}

const EVENT_KINDS = ['hyperparams', 'skipped-update', 'unhealthy', 'curriculum'] as const;

function readEvents(
  value: unknown,
  algo: AlgorithmInfo,
  updates: number,
  source: ImportedRun['source'],
  path = 'events',
): RunEvent[] {
  if (!Array.isArray(value)) {
    throw new ImportError(path, `must be an array, got ${describeValue(value)}`);
  }
  if (value.length > IMPORT_LIMITS.maxEvents) {
    throw new ImportError(
      path,
      `must have at most ${IMPORT_LIMITS.maxEvents} events, got ${value.length}`,
    );
  }
  return value.map((item, i): RunEvent => {
    const at = child(path, i);
    const event = expectRecord(item, at);
    const kind = expectOneOf(event.kind, child(at, 'kind'), EVENT_KINDS);
    // A change is recorded at the update it first applies to, which may not have reported yet.
    const step = expectInt(event.step, child(at, 'step'), 1, updates + 1);
    switch (kind) {
      case 'hyperparams': {
        expectKeys(event, at, ['step', 'kind', 'changes']);
        if (source === 'cli-run') {
          throw new ImportError(
            at,
            'a CLI run file records only its final config, so a run with live changes cannot ' +
              'be rebuilt from it',
          );
        }
        const changes = expectSettings(event.changes, child(at, 'changes'), algo, false);
        if (Object.keys(changes).length === 0) {
          throw new ImportError(child(at, 'changes'), 'must change at least one setting');
        }
        return { step, kind, changes };
      }
      case 'skipped-update':
      case 'unhealthy': {
        expectKeys(event, at, ['step', 'kind', 'reason']);
        const reason = expectString(event.reason, child(at, 'reason'), IMPORT_LIMITS.maxTextLength);
        return { step, kind, reason };
      }
      case 'curriculum': {
        expectKeys(event, at, ['step', 'kind', 'level', 'task']);
        const level = expectInt(event.level, child(at, 'level'), 0, 1000);
        const task = expectString(event.task, child(at, 'task'), IMPORT_LIMITS.maxNameLength);
        return { step, kind, level, task };
      }
    }
  });
}

function readSummary(value: unknown): Record<string, number | string> {
  const object = expectRecord(value, 'summary');
  const entries = Object.entries(object);
  if (entries.length > IMPORT_LIMITS.maxMetrics) {
    throw new ImportError('summary', `must have at most ${IMPORT_LIMITS.maxMetrics} entries`);
  }
  return Object.fromEntries(
    entries.map(([key, v]) => {
      const at = child('summary', key);
      if (key.length > IMPORT_LIMITS.maxNameLength || key === '__proto__') {
        throw new ImportError(at, `is not a valid summary name`);
      }
      if (typeof v === 'number' && Number.isFinite(v)) return [key, v];
      if (typeof v === 'string' && v.length <= IMPORT_LIMITS.maxTextLength) return [key, v];
      throw new ImportError(
        at,
        `must be a finite number or a short string, got ${describeValue(v)}`,
      );
    }),
  );
}

function initToJson(init: StartFrom): { shipped: string } | { file: string; bytes: string } {
  return init.kind === 'shipped'
    ? { shipped: init.model }
    : { file: init.name, bytes: bytesToBase64(init.bytes) };
}

/** Shipped names are checked against the catalog when the run starts (the worker's spec check). */
function readInit(value: unknown, path: string): StartFrom {
  const init = expectRecord(value, path);
  if (Object.hasOwn(init, 'shipped')) {
    expectKeys(init, path, ['shipped'], []);
    return { kind: 'shipped', model: expectModelName(init.shipped, child(path, 'shipped')) };
  }
  expectKeys(init, path, ['file', 'bytes'], []);
  const name = expectString(init.file, child(path, 'file'), 256);
  const text = expectString(init.bytes, child(path, 'bytes'), IMPORT_LIMITS.maxChars);
  let bytes: Uint8Array;
  try {
    bytes = base64ToBytes(text);
  } catch (error) {
    throw new ImportError(
      child(path, 'bytes'),
      error instanceof Error ? error.message : String(error),
    );
  }
  if (bytes.length === 0) throw new ImportError(child(path, 'bytes'), 'must not be empty');
  return { kind: 'file', name, bytes };
}
