/**
 * A run as a file: the one schema, writer and reader of what the CLI writes (`npm run train --
 * --out`), what the lab exports and imports, and what the compare view reads. JSON in two
 * variants, told apart by `format`, both at version 1:
 *
 *   lab-run  { format: 'agent-rl-lab/lab-run', version: 1, exportedAt?, label?,
 *              spec: { algorithm, task, seed, config, taskOptions?, backend?, sftSteps?,
 *                      reference?, init?: { shipped: name } | { file: name, bytes: base64 },
 *                      positions?: 'learned' | 'rotary',
 *                      curriculum?: { threshold, patience },
 *                      rewardModel?: { prompts, samplesPerPrompt, labelNoise, steps,
 *                                      pairsPerStep, lr },
 *                      retained?: { task, taskOptions? } },
 *              metrics, events,
 *              checkpoint?: the run's latest checkpoint (src/worker/run-checkpoint.ts),
 *              inspection?: its last update's samples, grid or episode (run-file-inspection.ts) }
 *   cli-run  { format: 'agent-rl-lab/run', version: 1, algorithm, task, seed, backend, createdAt,
 *              config, taskOptions?, curriculum?, rewardModel?, retained?, sftSteps?,
 *              init?: { file, bytes },
 *              model?: { width, layers, heads, positions?: 'learned' | 'rotary', rotaryBase? },
 *              metrics, events, summary }
 *
 * with metrics as { name: [value per update, …] }, NaN and ±Infinity spelled "NaN", "Infinity",
 * "-Infinity". The optional fields came later within version 1: a file without them is a run
 * without them, so files of every earlier lab and CLI still read. Positions are one of them: a
 * model recorded without `positions` (every file from before rotary positions) had learned ones.
 *
 * parseRunFile is the one read path for both: a pure function of the text, which refuses text
 * over IMPORT_LIMITS or nested deeper than the JSON depth limit before parsing, then checks every
 * field — types, sizes, numbers, the algorithm and task known, the config through the algorithm's
 * own FieldSpecs, series of equal length, events well-formed — and throws the first problem as an
 * ImportError naming its JSON path and the valid range. Nothing in a file is evaluated, and a
 * refused file changes nothing (there is no state here to change).
 */
import { BACKEND_CHOICES, type BackendChoice } from '../gpu/backend-choice';
import {
  DEFAULT_ROTARY_BASE,
  LAB_MODEL_SHAPE,
  type ModelShape,
  type PositionKind,
} from '../models/transformer-config';
import type { CurriculumConfig } from '../rl/curriculum';
import type { RewardModelConfig } from '../rl/reward-model';
import type { Metrics } from '../rl/trainer';
import { jsonDepthProblem } from '../util/json-depth';
import {
  copyRetained,
  type Inspection,
  type RetainedTaskSpec,
  type RunSpec,
  type StartFrom,
} from '../worker/run-protocol';
import {
  checkpointFromJson,
  checkpointToJson,
  type JsonCheckpoint,
  type RunCheckpoint,
} from '../worker/run-checkpoint';
import { bytesToBase64 } from '../util/base64';
import { metricsToCsv } from './csv';
import { expectLanguageModel, expectTaskOptions } from './json-checks';
import {
  describeValue,
  expectInt,
  expectKeys,
  expectOneOf,
  expectRecord,
  expectSettings,
  expectString,
  ImportError,
  IMPORT_LIMITS,
} from '../util/json-checks';
import { inspectionToJson, readInspection } from './run-file-inspection';
import {
  cliTask,
  knownAlgorithm,
  readEvents,
  readMetrics,
  readModelShape,
  readStart,
  readSummary,
  readTrainingGroups,
  seriesLength,
} from './run-file-fields';
import {
  alignSeries,
  tasksFor,
  type CompareCatalog,
  type RunEvent,
  type RunRecord,
  type Settings,
} from './run-record';
import type { LinkedRun } from './url-state';
import { errorText } from '../util/error-text';

export { ImportError, IMPORT_LIMITS } from '../util/json-checks';

export const LAB_RUN_FORMAT = 'agent-rl-lab/lab-run';
export const LAB_RUN_VERSION = 1;
export const CLI_RUN_FORMAT = 'agent-rl-lab/run';
export const CLI_RUN_VERSION = 1;

/** Largest seed (the worker's check of RunSpec.seed). */
export const MAX_SEED = 2 ** 31 - 1;

/** A metric value as JSON: a finite number, or a non-finite one spelled as a string. */
type JsonMetricValue = number | 'NaN' | 'Infinity' | '-Infinity';

/** What a run file may carry beside the run record (the documentation of each field). */
interface RunFileExtras {
  label?: string;
  /** Language models: the task's options (only those set; defaults fill the rest). */
  taskOptions?: Settings;
  backend?: BackendChoice;
  /** Language models started from a fresh initialization: the supervised warm-up's steps. */
  sftSteps?: number;
  /** Language models: the engine that scored the frozen reference ('engine' when left out). */
  reference?: 'engine' | 'ort';
  /** Language models: the saved weights the run started from (else a random initialization). */
  init?: StartFrom;
  /** Language models started from a new model: how it knows positions ('learned' when absent). */
  positions?: PositionKind;
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
  /** The last update's samples (or grid, or episode) the run kept, for the inspector. */
  inspection?: Inspection;
}

/**
 * What a CLI run file records of its model: the trunk's size and how it knows positions, with the
 * rotary base when they are rotary. Files from before rotary positions lack `positions`.
 */
export interface RecordedModel extends ModelShape {
  positions?: PositionKind;
  rotaryBase?: number;
}

/** The training groups both variants hold as the lab keeps them. */
type SharedFields = Pick<
  RunFileExtras,
  'taskOptions' | 'sftSteps' | 'curriculum' | 'rewardModel' | 'retained'
>;

/** The lab's variant, as written. */
export interface LabRunFile {
  format: typeof LAB_RUN_FORMAT;
  version: typeof LAB_RUN_VERSION;
  exportedAt?: string;
  label?: string;
  spec: SharedFields &
    Pick<RunFileExtras, 'backend' | 'reference' | 'positions'> & {
      algorithm: string;
      task: string;
      seed: number;
      config: Settings;
      init?: { shipped: string } | { file: string; bytes: string };
    };
  metrics: Record<string, JsonMetricValue[]>;
  events: RunEvent[];
  checkpoint?: JsonCheckpoint;
  /** inspectionToJson's copy (non-finite numbers as strings). */
  inspection?: unknown;
}

/** The CLI's variant, as written: metrics as number[] (writeCliRunFile spells non-finite ones). */
export interface CliRunFile extends SharedFields {
  format: typeof CLI_RUN_FORMAT;
  version: typeof CLI_RUN_VERSION;
  algorithm: string;
  /** The CLI's progress label ("grpo on reverse(2–6)"); the reader takes the task's name. */
  task: string;
  seed: number;
  /** The backend the CLI trained on, described. */
  backend: string;
  createdAt: string;
  config: Settings;
  /** Language models started from a file (`--init`): its name, and its bytes as base64. */
  init?: { file: string; bytes: string };
  /** Language models: the trunk and its positions (the lab builds only LAB_MODEL_SHAPE). */
  model?: RecordedModel;
  metrics: Record<string, number[]>;
  events: RunEvent[];
  summary: Record<string, number | string>;
}

/** A run to export: the run record plus what the lab keeps beside it. */
export interface LabRunExport extends RunRecord, RunFileExtras {}

/** A read run: a RunRecord for the compare view, plus what the file carried beside it. */
export interface ImportedRun extends RunRecord, RunFileExtras {
  /** Which variant it came from. */
  source: 'lab-run' | 'cli-run';
  /** CLI run files only: the backend description, creation time and summary the CLI wrote. */
  cli?: {
    backend: string;
    createdAt: string;
    summary: Record<string, number | string>;
    /**
     * Language models: the transformer's trunk the CLI trained (files from before lack it), its
     * positions always named ('learned' for files from before rotary positions).
     */
    model?: RecordedModel & { positions: PositionKind };
  };
}

/** Accumulates per-update metrics into aligned series (the CLI's metrics). */
export class MetricSeries {
  readonly series: Record<string, number[]> = {};
  private updates = 0;

  push(metrics: Metrics): void {
    for (const [name, value] of Object.entries(metrics)) {
      const values = (this.series[name] ??= new Array<number>(this.updates).fill(NaN));
      values.push(value);
    }
    this.updates += 1;
    for (const values of Object.values(this.series)) {
      while (values.length < this.updates) values.push(NaN);
    }
  }

  get length(): number {
    return this.updates;
  }
}

/** The CLI's run file as text (indented; non-finite numbers as strings, so series survive). */
export function writeCliRunFile(run: CliRunFile): string {
  return JSON.stringify(
    run,
    (_, value: unknown) =>
      typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
    1,
  );
}

/** The run as lab-run JSON (compact; non-finite metric values as strings). */
export function writeLabRunFile(run: LabRunExport): string {
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
      ...(run.positions === undefined ? {} : { positions: run.positions }),
      ...(run.curriculum === undefined ? {} : { curriculum: { ...run.curriculum } }),
      ...(run.rewardModel === undefined ? {} : { rewardModel: { ...run.rewardModel } }),
      ...(run.retained === undefined ? {} : { retained: copyRetained(run.retained) }),
    },
    metrics: Object.fromEntries(
      Object.entries(run.metrics).map(([name, values]) => [name, values.map(jsonMetricValue)]),
    ),
    events: run.events,
    ...(run.checkpoint === undefined ? {} : { checkpoint: checkpointToJson(run.checkpoint) }),
    ...(run.inspection === undefined ? {} : { inspection: inspectionToJson(run.inspection) }),
  };
  return JSON.stringify(file);
}

function jsonMetricValue(v: number): JsonMetricValue {
  return Number.isFinite(v) ? v : (String(v) as JsonMetricValue);
}

function initToJson(init: StartFrom): { shipped: string } | { file: string; bytes: string } {
  return init.kind === 'shipped'
    ? { shipped: init.model }
    : { file: init.name, bytes: bytesToBase64(init.bytes) };
}

/**
 * Reads a run file of either variant. Returns the run, or throws an ImportError naming the
 * JSON path of the first bad value (e.g. "metrics['reward/mean'][12]: must be a number or "NaN",
 * got true").
 */
export function parseRunFile(text: string, catalog: CompareCatalog): ImportedRun {
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
    const why = errorText(error);
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
    ['exportedAt', 'label', 'checkpoint', 'inspection'],
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
      'positions',
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
  if (root.inspection !== undefined) {
    run.inspection = readInspection(root.inspection, 'inspection', seriesLength(run.metrics));
  }
  return run;
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

/** One metric of a lab run: x = update number, y = value (only updates that reported it). */
export interface Series {
  x: number[];
  y: number[];
}

/** What the lab's exports need of a run (a LabRun or a StoredRun). */
export interface ShareableRun {
  label: string;
  spec: RunSpec;
  series: Record<string, Series>;
  events: RunEvent[];
  /** The last update's inspection the run kept, if any. */
  inspection?: Inspection | undefined;
}

/**
 * The run as lab-run JSON: its spec, every metric per update, its events, and (language models)
 * its latest checkpoint when given, so that an import resumes from it instead of replaying.
 */
export function runToJson(
  run: ShareableRun,
  exportedAt?: string,
  checkpoint?: RunCheckpoint,
): string {
  const { spec } = run;
  return writeLabRunFile({
    algorithm: spec.algo,
    task: spec.env ?? spec.task ?? '',
    seed: spec.seed,
    config: spec.config,
    metrics: alignSeries(run.series),
    events: run.events,
    label: run.label,
    backend: spec.backend,
    ...(spec.task !== undefined && spec.sftSteps !== undefined ? { sftSteps: spec.sftSteps } : {}),
    ...(spec.task !== undefined && spec.reference !== undefined
      ? { reference: spec.reference }
      : {}),
    ...(spec.task !== undefined && spec.init !== undefined ? { init: spec.init } : {}),
    ...(spec.task !== undefined && spec.positions !== undefined
      ? { positions: spec.positions }
      : {}),
    ...(spec.curriculum !== undefined ? { curriculum: spec.curriculum } : {}),
    ...(spec.rewardModel !== undefined ? { rewardModel: spec.rewardModel } : {}),
    ...(spec.retained !== undefined ? { retained: spec.retained } : {}),
    ...(spec.taskOptions ? { taskOptions: spec.taskOptions } : {}),
    ...(exportedAt ? { exportedAt } : {}),
    ...(checkpoint ? { checkpoint } : {}),
    ...(run.inspection ? { inspection: run.inspection } : {}),
  });
}

/** The run's metrics as CSV (one row per update, one column per metric, sorted by name). */
export function runToCsv(run: Pick<ShareableRun, 'series'>): string {
  const metrics = alignSeries(run.series);
  return metricsToCsv(metrics, Object.keys(metrics).sort());
}

/** A run rebuilt from an imported file: its spec, and the data a stored run shows. */
export interface ImportedLabRun {
  spec: RunSpec;
  label: string;
  data: {
    series: Record<string, Series>;
    events: RunEvent[];
    config: Settings;
    steps: number;
    /** The last update's inspection the file carried. */
    inspection?: Inspection;
  };
  /** The checkpoint the file carried (at or before its last update). */
  checkpoint?: RunCheckpoint;
  /** What the reader should know before starting it here (e.g. a model the lab does not build). */
  note?: string;
}

/**
 * Reads a lab-run or CLI run file (throws an ImportError naming the JSON path of the first bad
 * value; nothing is changed by a refused file) into what RunManager.addStored takes.
 */
export function runFromJson(text: string, catalog: CompareCatalog): ImportedLabRun {
  const imported = parseRunFile(text, catalog);
  return {
    spec: specOf(imported, catalog),
    label: imported.label ?? `${imported.algorithm} on ${imported.task}, seed ${imported.seed}`,
    data: {
      series: seriesOf(imported.metrics),
      events: imported.events,
      config: configAfter(imported.config, imported.events),
      steps: Math.max(0, ...Object.values(imported.metrics).map((v) => v.length)),
      ...(imported.inspection ? { inspection: imported.inspection } : {}),
    },
    ...(imported.checkpoint ? { checkpoint: imported.checkpoint } : {}),
    ...shapeNote(imported),
  };
}

/**
 * A CLI run of another model than the lab's, started from a fresh model: the lab would replay it
 * on its own model, so the history would not be the file's. The lab builds LAB_MODEL_SHAPE with
 * the positions the file names (specOf carries them over) at the default rotary base; another
 * trunk or base is named with its positions. (A run started from a file takes that file's model,
 * here as in the CLI.)
 */
function shapeNote(imported: ImportedRun): { note?: string } {
  const model = imported.cli?.model;
  if (!model || imported.init) return {};
  const lab: RecordedModel = {
    ...LAB_MODEL_SHAPE,
    positions: model.positions,
    ...(model.positions === 'rotary' ? { rotaryBase: DEFAULT_ROTARY_BASE } : {}),
  };
  const theirs: RecordedModel =
    model.positions === 'rotary'
      ? { ...model, rotaryBase: model.rotaryBase ?? DEFAULT_ROTARY_BASE }
      : model;
  const same = (['width', 'layers', 'heads', 'positions', 'rotaryBase'] as const).every(
    (key) => theirs[key] === lab[key],
  );
  if (same) return {};
  return {
    note:
      `It trained a transformer of ${describeModel(theirs)}; the lab builds ` +
      `${describeModel(lab)}. Starting it here replays its updates on the lab’s model, whose ` +
      'curves will differ from the file’s: compare it as it is.',
  };
}

/** "width 64, 2 layers, 4 heads, rotary positions (base 10000)". */
function describeModel(m: RecordedModel): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const positions =
    m.positions === 'rotary'
      ? `rotary positions (base ${m.rotaryBase ?? DEFAULT_ROTARY_BASE})`
      : 'learned positions';
  return `width ${m.width}, ${plural(m.layers, 'layer')}, ${plural(m.heads, 'head')}, ${positions}`;
}

function specOf(run: ImportedRun | LinkedRun, catalog: CompareCatalog): RunSpec {
  const lm = catalog.algorithms.find((a) => a.name === run.algorithm)?.family === 'lm';
  return {
    algo: run.algorithm,
    ...(lm
      ? {
          task: run.task,
          ...(run.taskOptions ? { taskOptions: run.taskOptions } : {}),
          sftSteps: run.sftSteps ?? catalog.sftSteps.default,
          ...('reference' in run && run.reference ? { reference: run.reference } : {}),
          ...(run.init ? { init: run.init } : {}),
          ...positionsOf(run),
          ...(run.curriculum ? { curriculum: { ...run.curriculum } } : {}),
          ...(run.rewardModel ? { rewardModel: { ...run.rewardModel } } : {}),
          ...(run.retained ? { retained: copyRetained(run.retained) } : {}),
        }
      : { env: run.task }),
    seed: run.seed,
    config: run.config,
    backend: ('backend' in run ? run.backend : undefined) ?? 'auto',
  };
}

/**
 * The positions a rebuilt run's new model takes: a lab-run file's or a link's own, or those of the
 * model a CLI run file recorded; left out for learned ones (the spec's default) and for runs
 * started from weights (which bring their own).
 */
function positionsOf(run: ImportedRun | LinkedRun): { positions?: 'rotary' } {
  if (run.init) return {};
  const positions = run.positions ?? ('cli' in run ? run.cli?.model?.positions : undefined);
  return positions === 'rotary' ? { positions } : {};
}

/** Per-update values (NaN: not reported) as the lab's sparse series. */
function seriesOf(metrics: Record<string, number[]>): Record<string, Series> {
  const out: Record<string, Series> = {};
  for (const [name, values] of Object.entries(metrics)) {
    const s: Series = { x: [], y: [] };
    values.forEach((v, i) => {
      if (!Number.isNaN(v)) {
        s.x.push(i + 1);
        s.y.push(v);
      }
    });
    out[name] = s;
  }
  return out;
}

function configAfter(config: Settings, events: readonly RunEvent[]): Settings {
  let out = { ...config };
  for (const e of events) if (e.kind === 'hyperparams') out = { ...out, ...e.changes };
  return out;
}

/** The run specs of a comparison link, to create again. */
export function specsFromLink(runs: readonly LinkedRun[], catalog: CompareCatalog): RunSpec[] {
  return runs.map((run) => specOf(run, catalog));
}
