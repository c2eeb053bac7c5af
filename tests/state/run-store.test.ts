import { describe, expect, it } from 'vitest';
import {
  lazyRunStore,
  memorylessStore,
  openRunStore,
  type RunStore,
} from '../../src/state/run-store';
import { RUN_CHECKPOINT_VERSION, type RunCheckpoint } from '../../src/worker/run-checkpoint';

const checkpoint: RunCheckpoint = {
  version: RUN_CHECKPOINT_VERSION,
  step: 2,
  backend: 'cpu',
  policy: {
    params: new Float32Array([1, 2]),
    m: new Float32Array(2),
    v: new Float32Array(2),
    stats: new Float32Array(1),
  },
  trainer: {
    algorithm: 'grpo',
    step: 2,
    config: {},
    events: [],
    health: { healthy: true },
    skippedInARow: 0,
    random: {},
  },
};

describe('openRunStore without IndexedDB (Node)', () => {
  it('keeps nothing, says why, and never throws', async () => {
    const store = await openRunStore();
    expect(store.unavailable).toBe(
      'this browser has no IndexedDB: runs last until the page closes',
    );
    await store.saveCheckpoint('run-1', checkpoint);
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });
});

describe('lazyRunStore', () => {
  it('opens on first use, once, and forwards every method', async () => {
    const log: string[] = [];
    let opens = 0;
    const inner: RunStore = {
      ...memorylessStore('kept nowhere'),
      saveCheckpoint: async (id, c) => void log.push(`save ${id} ${c.step}`),
      loadCheckpoint: async (id) => (log.push(`load ${id}`), checkpoint),
      removeCheckpoint: async (id) => void log.push(`remove ${id}`),
      checkpointSteps: async () => new Map([['run-1', 2]]),
    };
    const store = lazyRunStore(async () => {
      opens += 1;
      return inner;
    });
    expect(opens).toBe(0);
    expect(store.unavailable).toBeUndefined(); // not known before it is opened
    await Promise.all([store.list(), store.saveCheckpoint('run-1', checkpoint)]);
    expect(opens).toBe(1);
    expect(store.unavailable).toBe('kept nowhere');
    expect(await store.loadCheckpoint('run-1')).toBe(checkpoint);
    await store.removeCheckpoint('run-1');
    expect(await store.checkpointSteps()).toEqual(new Map([['run-1', 2]]));
    expect(log).toEqual(['save run-1 2', 'load run-1', 'remove run-1']);
    expect(opens).toBe(1);
  });
});
