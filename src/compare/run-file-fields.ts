/**
 * The field readers of the run-file parser (run-file.ts): each takes an untrusted JSON value and
 * its path, and returns the value checked — types, sizes and ranges — or throws an ImportError
 * naming the path and the valid range. Used only by parseRunFile, for both variants of the file.
 */
import {
  POSITION_KINDS,
  ROTARY_BASE_LIMITS,
  TRANSFORMER_LIMITS,
  type PositionKind,
} from '../models/transformer-config';
import type { StartFrom } from '../worker/run-protocol';
import { base64ToBytes } from '../util/base64';
import {
  expectCurriculum,
  expectLanguageModel,
  expectModelName,
  expectRetained,
  expectRewardModel,
} from './json-checks';
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
} from '../util/json-checks';
import {
  findAlgorithm,
  tasksFor,
  type AlgorithmInfo,
  type CompareCatalog,
  type RunEvent,
} from './run-record';
// Types only: the parser's result type, which these readers fill field by field.
import type { ImportedRun, RecordedModel } from './run-file';
import { errorText } from '../util/error-text';

/**
 * Where a language-model run started, where a file says (a lab-run file under `spec.`, a CLI run
 * file at its top level): its warm-up's SFT steps, and the weights it started from, or (a lab-run
 * file's new model) the positions it was built with; refused for algorithms without them.
 */
export function readStart(
  from: Record<string, unknown>,
  prefix: string,
  algo: AlgorithmInfo,
  catalog: CompareCatalog,
): Pick<ImportedRun, 'sftSteps' | 'init' | 'positions'> {
  const out: Pick<ImportedRun, 'sftSteps' | 'init' | 'positions'> = {};
  for (const key of ['sftSteps', 'init', 'positions'] as const) {
    if (from[key] !== undefined) expectLanguageModel(algo, prefix + key);
  }
  if (from.sftSteps !== undefined) {
    const { min, max } = catalog.sftSteps;
    out.sftSteps = expectInt(from.sftSteps, `${prefix}sftSteps`, min, max);
  }
  if (from.init !== undefined) out.init = readInit(from.init, `${prefix}init`);
  if (from.positions !== undefined) {
    const at = `${prefix}positions`;
    // A run started from weights has the positions of those weights, not a choice of its own.
    if (out.init) {
      throw new ImportError(at, 'is only for a run started from a new model (leave out init)');
    }
    out.positions = expectOneOf(from.positions, at, POSITION_KINDS);
  }
  return out;
}

/**
 * A language-model run's curriculum, reward-model settings and retained task, where a file holds
 * them (a lab-run file under `spec.`, a CLI run file at its top level); refused for algorithms
 * without them.
 */
export function readTrainingGroups(
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

/**
 * A transformer trunk's size, each within the model's limits, and how it knows positions: a file
 * from before rotary positions has no `positions`, and its model had learned ones, so the result
 * always names them. `rotaryBase` only with rotary positions, within the model's own limits.
 */
export function readModelShape(
  value: unknown,
  path: string,
): RecordedModel & { positions: PositionKind } {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['width', 'layers', 'heads'], ['positions', 'rotaryBase']);
  const [width, layers, heads] = (['width', 'layers', 'heads'] as const).map((key) => {
    const [min, max] = TRANSFORMER_LIMITS[key];
    return expectInt(json[key], child(path, key), min, max);
  }) as [number, number, number];
  const positions: PositionKind =
    json.positions === undefined
      ? 'learned'
      : expectOneOf(json.positions, child(path, 'positions'), POSITION_KINDS);
  if (json.rotaryBase === undefined) return { width, layers, heads, positions };
  const at = child(path, 'rotaryBase');
  if (positions !== 'rotary') {
    throw new ImportError(at, "is only meaningful with positions 'rotary'");
  }
  return { width, layers, heads, positions, rotaryBase: readRotaryBase(json.rotaryBase, at) };
}

/** The rotary base θ: a finite number in the model's ROTARY_BASE_LIMITS (so above 0). */
function readRotaryBase(value: unknown, path: string): number {
  const [min, max] = ROTARY_BASE_LIMITS;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ImportError(
      path,
      `must be a number in [${min}, ${max}], got ${describeValue(value)}`,
    );
  }
  return value;
}

export function knownAlgorithm(
  value: unknown,
  path: string,
  catalog: CompareCatalog,
): AlgorithmInfo {
  const names = catalog.algorithms.map((a) => a.name);
  const name = expectOneOf(value, path, names);
  return findAlgorithm(catalog, name)!;
}

/**
 * The CLI writes its progress label as the task: "q-learning on cliffwalking", "grpo on
 * reverse(2–6)" (the task's name with its options). A bare task name is accepted too.
 */
export function cliTask(value: unknown, algo: AlgorithmInfo, catalog: CompareCatalog): string {
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

export function readMetrics(value: unknown): Record<string, number[]> {
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

/** A number, or a non-finite one spelled as a string ("NaN", "Infinity", "-Infinity"). */
export function metricValue(value: unknown, path: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value === 'NaN') return NaN;
  if (value === 'Infinity') return Infinity;
  if (value === '-Infinity') return -Infinity;
  throw new ImportError(
    path,
    `must be a number or "NaN" ("Infinity", "-Infinity"), got ${describeValue(value)}`,
  );
}

export function seriesLength(metrics: Record<string, number[]>): number {
  const first = Object.values(metrics)[0];
  return first ? first.length : 0;
}

const EVENT_KINDS = ['hyperparams', 'skipped-update', 'unhealthy', 'curriculum'] as const;

export function readEvents(
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

export function readSummary(value: unknown): Record<string, number | string> {
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

/** Shipped names are checked against the catalog when the run starts (the worker's spec check). */
export function readInit(value: unknown, path: string): StartFrom {
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
    throw new ImportError(child(path, 'bytes'), errorText(error));
  }
  if (bytes.length === 0) throw new ImportError(child(path, 'bytes'), 'must not be empty');
  return { kind: 'file', name, bytes };
}
