/**
 * The IndexedDB run store in Chromium (Node has no IndexedDB): checkpoints saved, loaded, replaced,
 * removed with their run, kept across a re-open; a version-1 database (runs only) upgraded with
 * its runs intact; a stored checkpoint of another version ignored.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DB_NAME, DB_VERSION, openRunStore, type StoredRun } from '../../src/state/run-store';
import { RUN_CHECKPOINT_VERSION, type RunCheckpoint } from '../../src/worker/run-checkpoint';

function checkpointAt(step: number): RunCheckpoint {
  return {
    version: RUN_CHECKPOINT_VERSION,
    step,
    backend: 'webgpu',
    policy: {
      params: new Float32Array([0.5, -1.25, 3]),
      m: new Float32Array([0.01, 0.02, 0.03]),
      v: new Float32Array([1e-4, 2e-4, 3e-4]),
      stats: new Float32Array([step, 0.9, 0.999]),
    },
    reference: new Float32Array([0.5, -1, 2]),
    trainer: {
      algorithm: 'grpo',
      step,
      config: { lr: 1e-3 },
      events: [],
      health: { healthy: true },
      skippedInARow: 0,
      random: { sample: step * 4 },
    },
  };
}

const run = (id: string): StoredRun => ({
  version: 1,
  id,
  label: `#${id.slice(4)} grpo on reverse, seed 1`,
  color: '#2f5bea',
  spec: { algo: 'grpo', task: 'reverse', seed: 1, config: {}, backend: 'auto' },
  series: { 'reward/mean': { x: [1, 2], y: [0.25, 0.5] } },
  events: [],
  config: {},
  steps: 2,
  savedAt: '2026-12-02T00:00:00.000Z',
});

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('request failed'));
  });
}

/** Opens the database at `version` with the raw API (as an older lab, or a test's own writes). */
function openRaw(version: number, upgrade?: (db: IDBDatabase) => void): Promise<IDBDatabase> {
  const open = indexedDB.open(DB_NAME, version);
  if (upgrade) open.onupgradeneeded = () => upgrade(open.result);
  return done(open);
}

beforeEach(async () => {
  // Open stores close on the version change a deletion brings (run-store's onversionchange).
  await done(indexedDB.deleteDatabase(DB_NAME));
});

describe('openRunStore (IndexedDB)', () => {
  it('saves, loads (typed arrays intact), replaces and removes a checkpoint', async () => {
    const store = await openRunStore();
    expect(store.unavailable).toBeUndefined();
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    await store.saveCheckpoint('run-1', checkpointAt(3));
    const loaded = await store.loadCheckpoint('run-1');
    expect(loaded).toEqual(checkpointAt(3));
    expect(loaded?.policy.params).toBeInstanceOf(Float32Array);
    expect(loaded?.reference).toBeInstanceOf(Float32Array);
    // Only the latest is kept.
    await store.saveCheckpoint('run-1', checkpointAt(8));
    expect((await store.loadCheckpoint('run-1'))?.step).toBe(8);
    expect(await store.checkpointSteps()).toEqual(new Map([['run-1', 8]]));
    await store.removeCheckpoint('run-1');
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    expect(await store.checkpointSteps()).toEqual(new Map());
  });

  it('keeps runs and checkpoints across a re-open', async () => {
    const first = await openRunStore();
    await first.save(run('run-1'));
    await first.save(run('run-2'));
    await first.saveCheckpoint('run-1', checkpointAt(2));
    await first.saveCheckpoint('run-2', checkpointAt(1));
    const again = await openRunStore();
    expect((await again.list()).map((r) => r.id)).toEqual(['run-1', 'run-2']);
    expect(await again.loadCheckpoint('run-1')).toEqual(checkpointAt(2));
    expect(await again.checkpointSteps()).toEqual(
      new Map([
        ['run-1', 2],
        ['run-2', 1],
      ]),
    );
  });

  it('removes a run’s checkpoint with the run, and only that one', async () => {
    const store = await openRunStore();
    await store.save(run('run-1'));
    await store.save(run('run-2'));
    await store.saveCheckpoint('run-1', checkpointAt(2));
    await store.saveCheckpoint('run-2', checkpointAt(2));
    await store.remove('run-1');
    expect((await store.list()).map((r) => r.id)).toEqual(['run-2']);
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    expect(await store.loadCheckpoint('run-2')).toEqual(checkpointAt(2));
  });

  it('ignores a stored checkpoint of another version or shape', async () => {
    const store = await openRunStore();
    await store.saveCheckpoint('run-1', checkpointAt(2));
    const db = await openRaw(DB_VERSION);
    const tx = db.transaction('checkpoints', 'readwrite').objectStore('checkpoints');
    await done(tx.put({ ...checkpointAt(3), version: RUN_CHECKPOINT_VERSION + 1 }, 'run-2'));
    await done(tx.put({ ...checkpointAt(4), policy: { params: [1, 2, 3] } }, 'run-3'));
    db.close();
    expect(await store.loadCheckpoint('run-2')).toBeUndefined();
    expect(await store.loadCheckpoint('run-3')).toBeUndefined();
    // The steps list reads this version's only (run-3's shape is checked when it is loaded).
    expect([...(await store.checkpointSteps()).keys()].sort()).toEqual(['run-1', 'run-3']);
  });

  it('upgrades a version-1 database (runs only): its runs survive, checkpoints work', async () => {
    const v1 = await openRaw(1, (db) => db.createObjectStore('runs', { keyPath: 'id' }));
    await done(v1.transaction('runs', 'readwrite').objectStore('runs').put(run('run-4')));
    v1.close();
    const store = await openRunStore();
    expect(store.unavailable).toBeUndefined();
    expect(await store.list()).toEqual([run('run-4')]);
    await store.saveCheckpoint('run-4', checkpointAt(2));
    expect(await store.loadCheckpoint('run-4')).toEqual(checkpointAt(2));
    const db = await openRaw(DB_VERSION);
    expect(db.version).toBe(2);
    expect([...db.objectStoreNames].sort()).toEqual(['checkpoints', 'runs']);
    db.close();
  });

  it('goes on without storage when an older lab’s tab keeps the old version open', async () => {
    // An older lab's connection: it has no onversionchange, so it never lets the upgrade run.
    const old = await openRaw(1, (db) => db.createObjectStore('runs', { keyPath: 'id' }));
    const started = performance.now();
    const store = await openRunStore();
    expect(performance.now() - started).toBeGreaterThanOrEqual(2900); // waited ~3 s, then gave up
    expect(store.unavailable).toMatch(/another tab of the lab holds an older version open/);
    expect(await store.list()).toEqual([]);
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    old.close();
  });
});
