/**
 * The lab's text importers under hostile input: the run file (lab-run JSON, with the checkpoint
 * it carries) and the comparison link (URL state). Each property changes a real export — a key
 * named after an Object.prototype member anywhere, a flipped bit, a cut, a nesting or size bomb —
 * and the importer must answer with its own refusal (ImportError, naming where) or a run, within a
 * time and memory bound; a run it accepts must then draw in the compare view, and no input may
 * reach Object.prototype. Run counts are small so that the file stays fast (a few seconds).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesToBase64 } from '../../src/util/base64';
import {
  ImportError,
  IMPORT_LIMITS,
  parseRunFile,
  runFromJson,
  writeLabRunFile,
} from '../../src/compare/run-file';
import {
  decodeComparison,
  encodeComparison,
  URL_STATE_MAX_LENGTH,
  URL_STATE_VERSION,
} from '../../src/compare/url-state';
import { chartModel } from '../../src/state/compare-view/chart-model';
import { finalTableModel } from '../../src/state/compare-view/final-table-model';
import { UPDATE_AXIS } from '../../src/state/compare-view/axes';
import type { RunCheckpoint } from '../../src/worker/run-checkpoint';
import {
  answer,
  flipChar,
  nested,
  objectPaths,
  ODD_VALUES,
  PROTOTYPE_KEYS,
  prototypeSnapshot,
  valuePaths,
  withKey,
  withRawValue,
} from '../support/fuzz';
import { catalog, defaultsOf } from './fixtures';

const qLearning = writeLabRunFile({
  algorithm: 'q-learning',
  task: 'cliffwalking',
  seed: 4,
  config: defaultsOf('q-learning'),
  metrics: {
    'charts/episodic_return': [-100, -50, 'NaN' as unknown as number, -20].map(Number),
    'losses/td_error': [1, 0.5, 0.25, 0.1],
  },
  events: [
    { step: 2, kind: 'hyperparams', changes: { epsilon: 0.3 } },
    { step: 3, kind: 'skipped-update', reason: 'non-finite' },
  ],
  label: 'a run',
});

const checkpoint: RunCheckpoint = {
  version: 1,
  step: 2,
  backend: 'cpu',
  policy: {
    params: new Float32Array([0.1, -0.2, 0.3]),
    m: new Float32Array([0.01, 0, -0.01]),
    v: new Float32Array([1e-4, 0, 2e-4]),
    stats: new Float32Array([0.5, 1, 1, 2]),
  },
  trainer: {
    algorithm: 'grpo',
    step: 2,
    config: defaultsOf('grpo') as RunCheckpoint['trainer']['config'],
    events: [],
    health: { healthy: true },
    skippedInARow: 0,
    random: { prompts: 16, sampler: 300 },
  },
};
const grpo = writeLabRunFile({
  algorithm: 'grpo',
  task: 'copy',
  seed: 3,
  config: defaultsOf('grpo'),
  taskOptions: { maxLength: 5 },
  metrics: { 'reward/mean': [0.1, 0.2], 'reward/accuracy': [0, 0.5] },
  events: [],
  checkpoint,
});
const FILES = { qLearning, grpo } as const;
const fileArb = fc.constantFrom(...(Object.keys(FILES) as (keyof typeof FILES)[]));

/** Reads a run file; an accepted one must also draw and tabulate beside another run. */
function importAndDraw(text: string): void {
  const outcome = answer(() => runFromJson(text, catalog), ImportError);
  if (!outcome.ok) {
    expect((outcome.error as ImportError).path).toBeTypeOf('string');
    return;
  }
  const { spec, label, data } = outcome.value;
  const run = {
    id: 'run-1',
    label,
    color: '#000',
    dash: '',
    spec,
    series: data.series,
    events: data.events,
  };
  const other = { ...run, id: 'run-2', label: 'other', series: {}, events: [] };
  for (const metric of [...Object.keys(data.series), ...PROTOTYPE_KEYS]) {
    chartModel({
      metric,
      axis: 'update',
      entries: [
        { runs: [{ ...run, axis: UPDATE_AXIS }] },
        { runs: [{ ...other, axis: UPDATE_AXIS }] },
      ],
      smoothing: { kind: 'ema', weight: 0.6 },
      ignoreOutliers: false,
      width: 300,
    });
  }
  finalTableModel([run, other], [...Object.keys(data.series), ...PROTOTYPE_KEYS], catalog);
}

describe('run files (lab-run JSON and the checkpoint in it) under fuzzing', () => {
  it('prototype-named keys anywhere: refused or read, never a crash, never Object.prototype', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(
        fileArb,
        fc.nat(),
        fc.constantFrom(...PROTOTYPE_KEYS),
        fc.constantFrom(...ODD_VALUES),
        (name, pick, key, value) => {
          const json = JSON.parse(FILES[name]) as unknown;
          const paths = objectPaths(json);
          importAndDraw(withKey(json, paths[pick % paths.length]!, key, value));
        },
      ),
      { numRuns: 300 },
    );
    // A metric named after each of them: read as a series of its own, and drawn.
    for (const key of PROTOTYPE_KEYS.filter((k) => k !== '__proto__')) {
      const json = JSON.parse(qLearning) as { metrics: object };
      const text = withKey(json, ['metrics'], key, [1, 2, 3, 4]);
      expect(Object.hasOwn(parseRunFile(text, catalog).metrics, key)).toBe(true);
      importAndDraw(text);
    }
    expect(prototypeSnapshot()).toBe(before);
  });

  it('single flipped bits: refused or read, never a crash', () => {
    fc.assert(
      fc.property(fileArb, fc.nat(), fc.integer({ min: 0, max: 15 }), (name, pick, bit) => {
        const text = FILES[name];
        importAndDraw(flipChar(text, pick % text.length, bit));
      }),
      { numRuns: 300 },
    );
  });

  it('every cut is refused', () => {
    fc.assert(
      fc.property(fileArb, fc.nat(), (name, pick) => {
        const text = FILES[name];
        const cut = text.slice(0, pick % text.length);
        expect(answer(() => parseRunFile(cut, catalog), ImportError).ok).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('nesting bombs at any value are refused before JSON.parse sees them, within 16 MB', () => {
    fc.assert(
      fc.property(
        fileArb,
        fc.nat(),
        fc.integer({ min: IMPORT_LIMITS.maxChars / 10_000, max: 1_000_000 }),
        fc.constantFrom('array' as const, 'object' as const),
        (name, pick, depth, kind) => {
          const json = JSON.parse(FILES[name]) as unknown;
          const paths = valuePaths(json);
          const text = withRawValue(json, paths[pick % paths.length]!, nested(depth, kind));
          const outcome = answer(() => parseRunFile(text, catalog), ImportError, { mb: 16 });
          expect(outcome.ok).toBe(false);
          expect(outcome.ok || outcome.error.message).toMatch(/^\(file\): nests deeper than 64/);
          // Refused by the depth scan: the text never reached JSON.parse.
          expect(outcome.parsed).toEqual([]);
        },
      ),
      { numRuns: 20 },
    );
  });

  it('size bombs are refused before the work they ask for', () => {
    const json = JSON.parse(qLearning) as Record<string, unknown>;
    const bombs: [string, string, RegExp][] = [
      ['over 20 MB of text', ' '.repeat(IMPORT_LIMITS.maxChars + 1), /limit is 20,000,000/],
      [
        'a million and one values',
        JSON.stringify({
          ...json,
          metrics: { a: Array(500_001).fill(0), b: Array(500_001).fill(0) },
        }),
        /^metrics: must hold at most 1,000,000 values/,
      ],
      [
        'a thousand and one series',
        JSON.stringify({
          ...json,
          metrics: Object.fromEntries(
            Array.from({ length: 1001 }, (_, i) => [`m${i}`, [1, 2, 3, 4]]),
          ),
        }),
        /^metrics: must have at most 1000 series/,
      ],
      [
        'a hundred thousand and one events',
        JSON.stringify({ ...json, events: Array(IMPORT_LIMITS.maxEvents + 1).fill(0) }),
        /^events: must have at most 100000 events/,
      ],
      [
        'a label of a million characters',
        JSON.stringify({ ...json, label: 'x'.repeat(1_000_000) }),
        /^label: must be at most 2000 characters/,
      ],
    ];
    for (const [what, text, says] of bombs) {
      const outcome = answer(() => parseRunFile(text, catalog), ImportError, { mb: 64 });
      expect(outcome.ok || outcome.error.message).toMatch(says);
      // Text over the size limit is refused by its length, before JSON.parse is asked to read it.
      if (what === 'over 20 MB of text') expect(outcome.parsed).toEqual([]);
    }
  });
});

describe('comparison links (URL state) under fuzzing', () => {
  const token = encodeComparison(
    [
      { algorithm: 'q-learning', task: 'cliffwalking', seed: 1, config: defaultsOf('q-learning') },
      {
        algorithm: 'grpo',
        task: 'copy',
        seed: 2,
        config: { ...defaultsOf('grpo'), lr: 0.002 },
        taskOptions: { maxLength: 5 },
      },
    ],
    catalog,
  );
  const json = JSON.parse(
    Buffer.from(token.slice(URL_STATE_VERSION.length + 1), 'base64url').toString('utf8'),
  ) as unknown;
  const tokenOf = (text: string) =>
    `${URL_STATE_VERSION}.${bytesToBase64(new TextEncoder().encode(text), 'url')}`;

  it('reads the link it wrote', () => {
    expect(decodeComparison(token, catalog)).toHaveLength(2);
  });

  it('prototype-named keys anywhere: refused or read, never a crash, never Object.prototype', () => {
    const before = prototypeSnapshot();
    fc.assert(
      fc.property(
        fc.nat(),
        fc.constantFrom(...PROTOTYPE_KEYS),
        fc.constantFrom(...ODD_VALUES),
        (pick, key, value) => {
          const paths = objectPaths(json);
          const link = tokenOf(withKey(json, paths[pick % paths.length]!, key, value));
          answer(() => decodeComparison(link, catalog), ImportError);
        },
      ),
      { numRuns: 300 },
    );
    expect(prototypeSnapshot()).toBe(before);
  });

  it('flipped bits and cuts: refused or read (cuts always refused), never a crash', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 15 }), (pick, bit) => {
        answer(
          () => decodeComparison(flipChar(token, pick % token.length, bit), catalog),
          ImportError,
        );
        const cut = token.slice(0, pick % token.length);
        expect(answer(() => decodeComparison(cut, catalog), ImportError).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('nesting and size bombs are refused at once', () => {
    const deep = tokenOf(nested(700, 'array'));
    expect(deep.length).toBeLessThanOrEqual(URL_STATE_MAX_LENGTH);
    const outcome = answer(() => decodeComparison(deep, catalog), ImportError);
    expect(outcome.ok || outcome.error.message).toMatch(/nests deeper than 64/);
    expect(outcome.parsed).toEqual([]);
    const long = `${token}${'A'.repeat(10_000_000)}`;
    const refused = answer(() => decodeComparison(long, catalog), ImportError, { mb: 4 });
    expect(refused.ok || refused.error.message).toMatch(/must be text of at most 2000 characters/);
    expect(refused.parsed).toEqual([]);
  });
});
