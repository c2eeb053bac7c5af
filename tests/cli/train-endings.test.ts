/**
 * `npm run train` keeps its run on every way out: a run that turns unhealthy, an update that
 * throws, and the saves in between all leave a run file the lab's importer reads; a bad `--out`
 * fails before the first update. The fault is injected by wrapping an environment trainer (the
 * loop under test is the CLI's, not the algorithm's).
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/train';
import { parseRunFile, runFromJson } from '../../src/compare/run-file';
import type { Trainer } from '../../src/rl/trainer';
import { runCatalog } from '../../src/worker/run-spec';

/** What the wrapped trainer does at update `at`, and how many updates it has made. */
const fault = vi.hoisted(() => ({
  kind: 'none' as 'none' | 'unhealthy' | 'throw',
  at: 0,
  updates: 0,
  before: undefined as (() => void) | undefined,
}));

vi.mock('../../src/rl/registry', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/rl/registry')>();
  const wrap = (trainer: Trainer<object>): Trainer<object> => {
    let health: Trainer<object>['health'] = { healthy: true };
    const extra: Trainer<object>['events'][number][] = [];
    return {
      algorithm: trainer.algorithm,
      get config() {
        return trainer.config;
      },
      get step() {
        return trainer.step;
      },
      get events() {
        return [...trainer.events, ...extra];
      },
      get health() {
        return health;
      },
      setHyperparams: (partial) => trainer.setHyperparams(partial),
      async update() {
        fault.before?.();
        fault.updates += 1;
        if (fault.kind === 'throw' && fault.updates === fault.at) {
          throw new Error('device lost');
        }
        const metrics = await trainer.update();
        if (fault.kind === 'unhealthy' && fault.updates === fault.at) {
          const reason = '5 updates in a row skipped (last: non-finite loss)';
          health = { healthy: false, reason };
          extra.push({ step: trainer.step, kind: 'unhealthy', reason });
        }
        return metrics;
      },
    };
  };
  return {
    ...real,
    algorithm(name: string) {
      const algo = real.algorithm(name);
      if (algo.family !== 'env') return algo;
      return {
        ...algo,
        create: (...args: Parameters<typeof algo.create>) => wrap(algo.create(...args)),
      };
    },
  };
});

const quiet = () => vi.spyOn(console, 'log').mockImplementation(() => {});
const outPath = () => join(mkdtempSync(join(tmpdir(), 'train-end-')), 'run.json');
const base = ['--algo=q-learning', '--env=cliffwalking', '--updates=20'];

afterEach(() => {
  Object.assign(fault, { kind: 'none', at: 0, updates: 0, before: undefined });
  vi.restoreAllMocks();
});

describe('npm run train: the run file on every ending', () => {
  it('writes the run file of a run that turns unhealthy, with its event, and exits 1', async () => {
    const log = quiet();
    Object.assign(fault, { kind: 'unhealthy', at: 7 });
    const out = outPath();
    expect(await main([...base, `--out=${out}`])).toBe(1);
    const text = readFileSync(out, 'utf8');
    const run = JSON.parse(text);
    expect(run.summary).toMatchObject({ updates: 7, status: 'unhealthy' });
    expect(run.metrics['charts/episodic_return']).toHaveLength(7);
    const imported = parseRunFile(text, runCatalog());
    expect(imported.events.at(-1)).toMatchObject({ kind: 'unhealthy', step: 7 });
    expect(log.mock.calls.flat().join('\n')).toContain('stopped (unhealthy) after 7 updates');
  });

  it('writes the updates made before an update throws, then rethrows', async () => {
    quiet();
    Object.assign(fault, { kind: 'throw', at: 5 });
    const out = outPath();
    await expect(main([...base, `--out=${out}`])).rejects.toThrow('device lost');
    const text = readFileSync(out, 'utf8');
    expect(JSON.parse(text).summary).toMatchObject({
      updates: 4,
      status: 'error',
      reason: 'device lost',
    });
    expect(parseRunFile(text, runCatalog()).metrics['charts/episodic_return']).toHaveLength(4);
  });

  it('saves the run while it trains (--save-every seconds), each save a whole file', async () => {
    quiet();
    const out = outPath();
    const seen: unknown[] = [];
    // Before each update, the file on disk is read whole: the save of the update before it.
    fault.before = () => {
      if (existsSync(out)) seen.push(JSON.parse(readFileSync(out, 'utf8')).summary);
    };
    expect(await main([...base, '--updates=4', '--save-every=1e-9', `--out=${out}`])).toBe(0);
    expect(seen).toEqual(
      [1, 2, 3].map((updates) => expect.objectContaining({ updates, status: 'running' })),
    );
    expect(JSON.parse(readFileSync(out, 'utf8')).summary.updates).toBe(4);
    // No temporary file is left beside it.
    expect(readdirSync(dirname(out))).toEqual([basename(out)]);
  });

  it('checks --out before training: a folder, a file as its parent, a trailing slash', async () => {
    quiet();
    const dir = mkdtempSync(join(tmpdir(), 'train-out-'));
    mkdirSync(join(dir, 'folder'));
    writeFileSync(join(dir, 'file'), 'x');
    const cases: [string, string][] = [
      [join(dir, 'folder'), 'is a folder; give a file path inside it'],
      [join(dir, 'file', 'run.json'), `${join(dir, 'file')} is a file, not a folder`],
      [`${dir}/`, 'names a folder; give a file path'],
    ];
    for (const [out, message] of cases) {
      await expect(main([...base, `--out=${out}`])).rejects.toThrow(message);
    }
    // Refused before the first update.
    expect(fault.updates).toBe(0);
  });

  it('writes a run file the lab imports, creating its folder', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-new-')), 'a', 'b', 'run.json');
    expect(await main([...base, '--seed=0', `--out=${out}`])).toBe(0);
    const imported = parseRunFile(readFileSync(out, 'utf8'), runCatalog());
    expect(imported).toMatchObject({ algorithm: 'q-learning', task: 'cliffwalking', seed: 0 });
    expect(imported.cli?.summary).toMatchObject({ updates: 20 });
    expect('status' in (imported.cli?.summary ?? {})).toBe(false);
    // And the lab's own import of a file (the one its Import button uses) takes it too.
    expect(runFromJson(readFileSync(out, 'utf8'), runCatalog()).spec.algo).toBe('q-learning');
  });
});
