/**
 * A run's kept inspection (its last update's samples, grid or CartPole episode: what the lab's
 * inspector shows of a stored run) inside a lab-run file, so that an exported run can still be
 * inspected after import. Written as it is, except that non-finite numbers (a token's ratio is NaN
 * where it was not trained) are spelled as strings, as metric values are. Read field by field
 * like the rest of the file: kinds, types, sizes and ranges, each failure an ImportError naming
 * its JSON path. Text is kept as text: the inspector shows it, nothing evaluates it.
 */
import {
  child,
  describeValue,
  expectInt,
  expectKeys,
  expectOneOf,
  expectRecord,
  expectString,
  ImportError,
  IMPORT_LIMITS,
} from '../util/json-checks';
import type {
  CartPoleInspection,
  GridInspection,
  InspectedSample,
  InspectedToken,
  Inspection,
  SampleInspection,
} from '../worker/run-protocol';
import { metricValue } from './run-file-fields';

/** What an imported inspection may hold at most (far above what the lab keeps with a run). */
export const INSPECTION_LIMITS = {
  /** Tokens over all samples. */
  maxTokens: 100_000,
  maxSamples: 10_000,
  /** Grid cells (rows × cols), and CartPole frames. */
  maxCells: 1_000_000,
  maxFrames: 100_000,
} as const;

/** The grid cell kinds the inspector draws. */
const CELLS = ['floor', 'wall', 'goal', 'hole', 'cliff'] as const;

/** The inspection as JSON: a copy in which every non-finite number is a string ("NaN"). */
export function inspectionToJson(inspection: Inspection): unknown {
  return JSON.parse(
    JSON.stringify(inspection, (_, value: unknown) =>
      typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
    ),
  );
}

/** Reads `value` (at `path`) as an inspection of an update in [0, updates]. */
export function readInspection(value: unknown, path: string, updates: number): Inspection {
  const json = expectRecord(value, path);
  const kind = expectOneOf(json.kind, child(path, 'kind'), ['samples', 'grid', 'cartpole']);
  const algorithm = expectString(
    json.algorithm,
    child(path, 'algorithm'),
    IMPORT_LIMITS.maxNameLength,
  );
  const step = expectInt(json.step, child(path, 'step'), 0, updates);
  switch (kind) {
    case 'samples':
      return readSamples(json, path, algorithm, step);
    case 'grid':
      return readGrid(json, path, algorithm, step);
    case 'cartpole':
      return readCartPole(json, path, algorithm, step);
  }
}

function readSamples(
  json: Record<string, unknown>,
  path: string,
  algorithm: string,
  step: number,
): SampleInspection {
  expectKeys(json, path, ['kind', 'algorithm', 'step', 'groupSize', 'has', 'samples']);
  const groupSize = expectInt(json.groupSize, child(path, 'groupSize'), 1, 4096);
  const hasPath = child(path, 'has');
  const has = expectRecord(json.has, hasPath);
  expectKeys(has, hasPath, ['ratio', 'value']);
  const samplesPath = child(path, 'samples');
  const list = expectList(json.samples, samplesPath, INSPECTION_LIMITS.maxSamples);
  // The total size first, so a huge file is refused before its tokens are read.
  let tokens = 0;
  list.forEach((item, i) => {
    const sample = expectRecord(item, child(samplesPath, i));
    tokens += Array.isArray(sample.tokens) ? sample.tokens.length : 0;
  });
  if (tokens > INSPECTION_LIMITS.maxTokens) {
    throw new ImportError(
      samplesPath,
      `must hold at most ${INSPECTION_LIMITS.maxTokens.toLocaleString('en')} tokens in all, ` +
        `got ${tokens.toLocaleString('en')}`,
    );
  }
  return {
    kind: 'samples',
    algorithm,
    step,
    groupSize,
    has: {
      ratio: expectBoolean(has.ratio, child(hasPath, 'ratio')),
      value: expectBoolean(has.value, child(hasPath, 'value')),
    },
    samples: list.map((item, i) => readSample(item, child(samplesPath, i))),
  };
}

function readSample(value: unknown, path: string): InspectedSample {
  const json = expectRecord(value, path);
  expectKeys(json, path, ['group', 'prompt', 'completion', 'reward', 'advantage', 'tokens']);
  const tokensPath = child(path, 'tokens');
  const tokens = expectList(json.tokens, tokensPath, INSPECTION_LIMITS.maxTokens);
  const text = (key: string) =>
    expectString(json[key], child(path, key), IMPORT_LIMITS.maxTextLength, true);
  return {
    group: expectInt(json.group, child(path, 'group'), 0, INSPECTION_LIMITS.maxSamples),
    prompt: text('prompt'),
    completion: text('completion'),
    reward: metricValue(json.reward, child(path, 'reward')),
    advantage: metricValue(json.advantage, child(path, 'advantage')),
    tokens: tokens.map((item, i) => readToken(item, child(tokensPath, i))),
  };
}

function readToken(value: unknown, path: string): InspectedToken {
  const json = expectRecord(value, path);
  expectKeys(
    json,
    path,
    ['text', 'trained', 'observation', 'advantage', 'ratio', 'clipped'],
    ['value', 'return'],
  );
  const token: InspectedToken = {
    text: expectString(json.text, child(path, 'text'), IMPORT_LIMITS.maxNameLength, true),
    trained: expectBoolean(json.trained, child(path, 'trained')),
    observation: expectBoolean(json.observation, child(path, 'observation')),
    advantage: metricValue(json.advantage, child(path, 'advantage')),
    ratio: metricValue(json.ratio, child(path, 'ratio')),
    clipped: expectBoolean(json.clipped, child(path, 'clipped')),
  };
  if (json.value !== undefined) token.value = metricValue(json.value, child(path, 'value'));
  if (json.return !== undefined) token.return = metricValue(json.return, child(path, 'return'));
  return token;
}

function readGrid(
  json: Record<string, unknown>,
  path: string,
  algorithm: string,
  step: number,
): GridInspection {
  expectKeys(json, path, [
    'kind',
    'algorithm',
    'step',
    'rows',
    'cols',
    'cells',
    'start',
    'values',
    'moves',
  ]);
  const rows = expectInt(json.rows, child(path, 'rows'), 1, 1000);
  const cols = expectInt(json.cols, child(path, 'cols'), 1, 1000);
  const count = rows * cols;
  if (count > INSPECTION_LIMITS.maxCells) {
    throw new ImportError(
      path,
      `must have at most ${INSPECTION_LIMITS.maxCells.toLocaleString('en')} cells, got ${count}`,
    );
  }
  const cellsPath = child(path, 'cells');
  const valuesPath = child(path, 'values');
  const movesPath = child(path, 'moves');
  const cells = expectList(json.cells, cellsPath, count, count);
  const values = expectList(json.values, valuesPath, count, count);
  const moves = expectList(json.moves, movesPath, count, count);
  return {
    kind: 'grid',
    algorithm,
    step,
    rows,
    cols,
    cells: cells.map((c, i) => expectOneOf(c, child(cellsPath, i), CELLS)),
    start: expectInt(json.start, child(path, 'start'), 0, count - 1),
    values: values.map((v, i) => metricValue(v, child(valuesPath, i))),
    moves: moves.map((m, i): [number, number] => {
      const at = child(movesPath, i);
      const [dr, dc] = expectList(m, at, 2, 2);
      return [expectInt(dr, child(at, 0), -1, 1), expectInt(dc, child(at, 1), -1, 1)];
    }),
  };
}

function readCartPole(
  json: Record<string, unknown>,
  path: string,
  algorithm: string,
  step: number,
): CartPoleInspection {
  expectKeys(json, path, ['kind', 'algorithm', 'step', 'x', 'theta', 'steps', 'end']);
  const xPath = child(path, 'x');
  const thetaPath = child(path, 'theta');
  const x = expectList(json.x, xPath, INSPECTION_LIMITS.maxFrames);
  const theta = expectList(json.theta, thetaPath, x.length, x.length);
  return {
    kind: 'cartpole',
    algorithm,
    step,
    x: x.map((v, i) => metricValue(v, child(xPath, i))),
    theta: theta.map((v, i) => metricValue(v, child(thetaPath, i))),
    steps: expectInt(json.steps, child(path, 'steps'), 0, INSPECTION_LIMITS.maxFrames),
    end: expectOneOf(json.end, child(path, 'end'), ['fell', 'truncated'] as const),
  };
}

/** An array of `min`..`max` items (any items: the caller reads them). */
function expectList(value: unknown, path: string, max: number, min = 0): unknown[] {
  if (!Array.isArray(value) || value.length < min || value.length > max) {
    const size = min === max ? `${max}` : min > 0 ? `${min} to ${max}` : `at most ${max}`;
    throw new ImportError(path, `must be a list of ${size} items, got ${describeValue(value)}`);
  }
  return value;
}

function expectBoolean(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') {
    throw new ImportError(path, `must be true or false, got ${describeValue(value)}`);
  }
  return value;
}
