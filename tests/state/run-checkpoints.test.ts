import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { resumeText, type CheckpointStorePort } from '../../src/state/run-checkpoints';
import { memorylessStore } from '../../src/state/run-store';
import { RunManager, type RunPort } from '../../src/state/runs.svelte';
import type { RunStorePort, StoredRun } from '../../src/state/run-store';
import {
  checkpointFromRecord,
  RUN_CHECKPOINT_VERSION,
  type RunCheckpoint,
} from '../../src/worker/run-checkpoint';
import type { ReplayPlan, RunCatalog, RunMessage, RunSpec } from '../../src/worker/run-protocol';

/** A small, well-formed checkpoint at `step` (4 weights). */
function checkpointAt(step: number): RunCheckpoint {
  return {
    version: RUN_CHECKPOINT_VERSION,
    step,
    backend: 'cpu',
    policy: {
      params: new Float32Array([0.1, -0.2, 0.3, 0.4]),
      m: new Float32Array(4),
      v: new Float32Array(4),
      stats: new Float32Array([step]),
    },
    trainer: {
      algorithm: 'grpo',
      step,
      config: { lr: 1e-3 },
      events: [],
      health: { healthy: true },
      skippedInARow: 0,
      random: { sample: 3 * step },
    },
  };
}

interface WorkerOptions {
  /** createRun refuses any checkpoint with this message (as run-host's checks do). */
  refuseCheckpoint?: string;
  /** checkpoint() rejects, as a worker without the method does. */
  checkpointThrows?: string;
  /** checkpoint() never answers (a stuck worker). */
  checkpointHangs?: boolean;
}

/**
 * A run worker stand-in that also answers checkpoint(): a language-model run's state at the
 * update count the test sets (`at.step`), null for environment runs (spec.env set).
 */
function fakeWorker(options: WorkerOptions) {
  const calls: string[] = [];
  const at = { step: 0 };
  const received: { replay?: ReplayPlan; checkpoint?: RunCheckpoint } = {};
  let env = false;
  let listener: ((message: RunMessage) => void) | undefined;
  const send = (message: RunMessage) => listener?.(message);
  const failures: ((reason: string) => void)[] = [];
  const die = (reason: string) => failures.splice(0).forEach((l) => l(reason));
  const port: RunPort = {
    api: {
      async createRun(spec, onMessage, replay, checkpoint) {
        listener = onMessage;
        env = spec.env !== undefined;
        Object.assign(received, { replay, checkpoint });
        calls.push(
          `createRun${replay ? ` replay ${replay.steps}` : ''}` +
            `${checkpoint ? ` from ${checkpoint.step}` : ''}`,
        );
        send({ type: 'status', status: 'warming' });
        if (checkpoint && options.refuseCheckpoint) {
          send({ type: 'status', status: 'error', error: options.refuseCheckpoint });
          throw new Error(options.refuseCheckpoint);
        }
        at.step = replay?.steps ?? 0;
        send({ type: 'backend', kind: 'cpu', line: 'CPU — test' });
        send({ type: 'status', status: 'idle' });
      },
      async start() {
        calls.push('start');
        send({ type: 'status', status: 'running' });
      },
      async pause() {
        calls.push('pause');
        send({ type: 'status', status: 'paused' });
      },
      async step() {
        calls.push('step');
      },
      async setHyperparams() {
        return { ok: true, appliesAt: 1 };
      },
      async inspect() {
        return null;
      },
      async inspectKept() {
        return [];
      },
      async exportOnnx() {
        return null;
      },
      async checkpoint() {
        calls.push('checkpoint');
        if (options.checkpointThrows) throw new Error(options.checkpointThrows);
        if (options.checkpointHangs) await new Promise(() => {});
        return env ? null : checkpointAt(at.step);
      },
      async dispose() {
        calls.push('dispose');
      },
    },
    terminate: () => calls.push('terminate'),
    onFailure: (listener) => failures.push(listener),
  };
  return { port, calls, at, received, send, die };
}

/** An in-memory CheckpointStorePort that logs each operation. */
function memoryCheckpoints(initial: Record<string, RunCheckpoint> = {}, saveFails?: string) {
  const kept = new Map(Object.entries(initial));
  const log: string[] = [];
  const store: CheckpointStorePort = {
    async saveCheckpoint(id, checkpoint) {
      log.push(`save ${id} ${checkpoint.step}`);
      if (saveFails) throw new Error(saveFails);
      kept.set(id, checkpoint);
    },
    async loadCheckpoint(id) {
      log.push(`load ${id}`);
      return checkpointFromRecord(kept.get(id));
    },
    async removeCheckpoint(id) {
      log.push(`remove ${id}`);
      kept.delete(id);
    },
    async checkpointSteps() {
      return new Map([...kept].map(([id, c]) => [id, c.step]));
    },
  };
  return { store, kept, log };
}

const catalog: RunCatalog = {
  algorithms: [
    {
      name: 'q-learning',
      family: 'env',
      doc: '',
      spec: {},
      defaults: {},
      envs: ['cliffwalking'],
      exportsOnnx: false,
      checkpoints: false,
      reference: null,
      curriculum: false,
      rewardModel: false,
      retained: false,
    },
    {
      name: 'grpo',
      family: 'lm',
      doc: '',
      spec: {},
      defaults: {},
      envs: [],
      exportsOnnx: true,
      checkpoints: true,
      reference: 'kl',
      curriculum: false,
      rewardModel: false,
      retained: false,
    },
  ],
  tasks: [],
  sftSteps: { default: 100, min: 0, max: 5000, doc: '' },
  startingModels: [],
};

const lmSpec: RunSpec = { algo: 'grpo', task: 'reverse', seed: 2, config: {}, backend: 'cpu' };
const envSpec: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: {},
  backend: 'cpu',
};

/** A stored GRPO run at update 5, with a live change at update 4. */
const storedLm: StoredRun = {
  version: 1,
  id: 'run-2',
  label: '#2 grpo on reverse, seed 2',
  color: '#2f5bea',
  spec: lmSpec,
  series: { 'reward/mean': { x: [1, 2, 3, 4, 5], y: [0, 0.1, 0.2, 0.3, 0.4] } },
  events: [{ step: 4, kind: 'hyperparams', changes: { lr: 2e-3 } }],
  config: { lr: 2e-3 },
  steps: 5,
  savedAt: '2026-12-02T00:00:00.000Z',
};

function runStore(initial: StoredRun[]): RunStorePort {
  return {
    list: async () => initial.map((r) => structuredClone(r)),
    save: async () => {},
    remove: async () => {},
  };
}

async function setUp(
  options: {
    worker?: WorkerOptions;
    checkpoints?: ReturnType<typeof memoryCheckpoints>;
    stored?: StoredRun[];
    withCatalog?: boolean;
  } = {},
) {
  const workers: ReturnType<typeof fakeWorker>[] = [];
  const checkpoints = options.checkpoints ?? memoryCheckpoints();
  const manager = new RunManager({
    catalog: { runCatalog: async () => catalog, checkRunSpec: async () => [] },
    spawn: () => {
      const worker = fakeWorker(options.worker ?? {});
      workers.push(worker);
      return worker.port;
    },
    store: runStore(options.stored ?? []),
    saveEveryMs: 1,
    checkpoints: checkpoints.store,
  });
  if (options.withCatalog !== false) await manager.loadCatalog();
  await manager.restore();
  return { manager, workers, checkpoints };
}

/** Lets the background saves (a chain of promises) finish. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

afterEach(() => {
  vi.useRealTimers();
});

describe('resumeText (what a stored run card says)', () => {
  // [steps, checkpoint step, text]: 40 − 30 = 10 updates left to replay; 1 − 0 = 1 (singular).
  const cases: [number, number | undefined, string][] = [
    [40, undefined, 'replays its 40 updates'],
    [1, undefined, 'replays its 1 update'],
    [40, 30, 'resumes from its checkpoint at update 30, then replays 10 updates'],
    [1, 0, 'resumes from its checkpoint at update 0, then replays 1 update'],
    [40, 40, 'resumes from its checkpoint at update 40'],
    // A checkpoint after the stored steps is not used: the run replays.
    [40, 41, 'replays its 40 updates'],
  ];
  it.each(cases)('%i updates, checkpoint at %s → %s', (steps, at, text) => {
    expect(resumeText(steps, at)).toBe(text);
  });
});

describe('checkpointFromRecord (stored records from earlier visits)', () => {
  it('accepts a well-formed checkpoint as it is', () => {
    const good = checkpointAt(3);
    expect(checkpointFromRecord(good)).toBe(good);
    const withReference = { ...good, reference: new Float32Array(4) };
    expect(checkpointFromRecord(withReference)).toBe(withReference);
  });

  const good = checkpointAt(3);
  const bad: [string, unknown][] = [
    ['nothing', undefined],
    ['null', null],
    ['a string', 'checkpoint'],
    ['an array', [good]],
    ['version 0', { ...good, version: 0 }],
    ['version 2', { ...good, version: 2 }],
    ['no version', { ...good, version: undefined }],
    ['step −1', { ...good, step: -1, trainer: { ...good.trainer, step: -1 } }],
    ['step 2.5', { ...good, step: 2.5, trainer: { ...good.trainer, step: 2.5 } }],
    ['step ≠ trainer.step', { ...good, step: 4 }],
    ['backend gpu', { ...good, backend: 'gpu' }],
    ['no policy', { ...good, policy: undefined }],
    ['params a plain array', { ...good, policy: { ...good.policy, params: [0.1, 0.2, 0.3, 0.4] } }],
    ['params Float64Array', { ...good, policy: { ...good.policy, params: new Float64Array(4) } }],
    ['params empty', { ...good, policy: { ...good.policy, params: new Float32Array(0) } }],
    ['m of 3 for 4 weights', { ...good, policy: { ...good.policy, m: new Float32Array(3) } }],
    ['v missing', { ...good, policy: { ...good.policy, v: undefined } }],
    ['stats missing', { ...good, policy: { ...good.policy, stats: undefined } }],
    ['reference of 5 for 4 weights', { ...good, reference: new Float32Array(5) }],
    ['reference a plain array', { ...good, reference: [0, 0, 0, 0] }],
    ['no trainer', { ...good, trainer: undefined }],
    ['trainer without algorithm', { ...good, trainer: { ...good.trainer, algorithm: 7 } }],
    ['trainer config null', { ...good, trainer: { ...good.trainer, config: null } }],
    ['trainer events not a list', { ...good, trainer: { ...good.trainer, events: {} } }],
  ];
  it.each(bad)('ignores %s (no throw, undefined)', (_name, value) => {
    expect(checkpointFromRecord(value)).toBeUndefined();
  });

  it('ignores every version but the current one', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
        (version) => {
          fc.pre(version !== RUN_CHECKPOINT_VERSION);
          expect(checkpointFromRecord({ ...checkpointAt(1), version })).toBeUndefined();
        },
      ),
    );
  });

  it('the no-IndexedDB store keeps none and never throws', async () => {
    const store = memorylessStore('no IndexedDB');
    await store.saveCheckpoint('run-1', checkpointAt(2));
    expect(await store.loadCheckpoint('run-1')).toBeUndefined();
    await store.removeCheckpoint('run-1');
    expect(await store.checkpointSteps()).toEqual(new Map());
  });
});

describe('RunManager: taking checkpoints', () => {
  it('keeps an LM run’s checkpoint after a pause, without holding the pause', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    workers[0]!.at.step = 7;
    await manager.pause(run);
    expect(run.busy).toBe(false);
    await settle();
    expect(workers[0]!.calls).toEqual(['createRun', 'start', 'pause', 'checkpoint']);
    expect(checkpoints.kept.get(run.id)?.step).toBe(7);
    expect(run.checkpointStep).toBe(7);
  });

  it('keeps only the latest one per run', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    for (const step of [3, 8]) {
      await manager.start(run);
      workers[0]!.at.step = step;
      await manager.pause(run);
    }
    await settle();
    expect(checkpoints.log.filter((l) => l.startsWith('save'))).toEqual([
      'save run-1 3',
      'save run-1 8',
    ]);
    expect([...checkpoints.kept.keys()]).toEqual(['run-1']);
    expect(checkpoints.kept.get('run-1')?.step).toBe(8);
  });

  it('never asks an environment run (catalog family env)', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(envSpec);
    await manager.start(run);
    await manager.pause(run);
    await manager.park(run);
    await settle();
    expect(workers[0]!.calls).not.toContain('checkpoint');
    expect(checkpoints.log.filter((l) => !l.startsWith('remove'))).toEqual([]);
  });

  it('without a catalog asks the worker, and keeps nothing when it answers null', async () => {
    const { manager, workers, checkpoints } = await setUp({ withCatalog: false });
    const run = await manager.create(envSpec);
    await manager.start(run);
    await manager.pause(run);
    await settle();
    expect(workers[0]!.calls.at(-1)).toBe('checkpoint');
    expect(checkpoints.kept.size).toBe(0);
    expect(run.checkpointStep).toBeUndefined();
  });

  it('takes one before parking, while the worker is still there', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    workers[0]!.at.step = 12;
    await manager.park(run);
    expect(workers[0]!.calls).toEqual(['createRun', 'start', 'checkpoint', 'dispose', 'terminate']);
    expect(checkpoints.kept.get(run.id)?.step).toBe(12);
    expect(run.status).toBe('stored');
  });

  it('takes one every 30 s while the run trains, and stops when it pauses', async () => {
    vi.useFakeTimers();
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    const asked = () => workers[0]!.calls.filter((c) => c === 'checkpoint').length;
    workers[0]!.at.step = 4;
    await vi.advanceTimersByTimeAsync(29_999);
    expect(asked()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked()).toBe(1);
    expect(checkpoints.kept.get(run.id)?.step).toBe(4);
    workers[0]!.at.step = 9;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(asked()).toBe(2);
    expect(checkpoints.kept.get(run.id)?.step).toBe(9);
    // Pausing takes one more, then the clock stops asking.
    await manager.pause(run);
    await vi.advanceTimersByTimeAsync(0);
    expect(asked()).toBe(3);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(asked()).toBe(3);
    // Running again restarts the 30 s clock.
    await manager.start(run);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(asked()).toBe(4);
    // A deleted run is asked no more.
    await manager.remove(run);
    await vi.advanceTimersByTimeAsync(90_000);
    expect(asked()).toBe(4);
  });

  it('notes a failed save in the storage note, never throws, and the run goes on', async () => {
    const checkpoints = memoryCheckpoints({}, 'QuotaExceededError: the disk is full');
    const { manager } = await setUp({ checkpoints });
    const run = await manager.create(lmSpec);
    await manager.start(run);
    await manager.pause(run);
    await settle();
    expect(manager.storageNote).toBe(
      "#1's checkpoint could not be saved: QuotaExceededError: the disk is full",
    );
    expect(run.status).toBe('paused');
    expect(run.error).toBeUndefined();
    expect(run.checkpointStep).toBeUndefined();
    // Parking still ends the worker.
    await manager.park(run);
    expect(run.status).toBe('stored');
  });

  it('parks a stuck worker all the same, after waiting 10 s for its checkpoint', async () => {
    vi.useFakeTimers();
    const { manager, workers, checkpoints } = await setUp({ worker: { checkpointHangs: true } });
    const run = await manager.create(lmSpec);
    workers[0]!.send({
      type: 'update',
      points: [{ step: 1, metrics: {} }],
      events: [],
      config: {},
    });
    const parked = manager.park(run);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(workers[0]!.calls).not.toContain('dispose');
    await vi.advanceTimersByTimeAsync(1);
    await parked;
    expect(workers[0]!.calls.slice(-3)).toEqual(['checkpoint', 'dispose', 'terminate']);
    expect(run.status).toBe('stored');
    expect(checkpoints.kept.size).toBe(0);
    // Started again at 10 s: its resume waits for the unanswered take, given up at 30 s.
    const started = manager.start(run);
    await vi.advanceTimersByTimeAsync(19_999);
    expect(workers[1]!.calls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await started;
    expect(workers[1]!.calls).toEqual(['createRun replay 1', 'start']);
    expect(manager.storageNote).toBe('#1: no checkpoint taken (the worker did not answer in 30 s)');
  });

  it('notes a worker that cannot give one (no checkpoint() yet), and parks anyway', async () => {
    const { manager, workers } = await setUp({ worker: { checkpointThrows: 'no such method' } });
    const run = await manager.create(lmSpec);
    await manager.start(run);
    await manager.park(run);
    expect(manager.storageNote).toBe('#1: no checkpoint taken (no such method)');
    expect(workers[0]!.calls.slice(-2)).toEqual(['dispose', 'terminate']);
    expect(run.status).toBe('stored');
    expect(run.error).toBeUndefined();
  });
});

describe('RunManager: resuming from checkpoints', () => {
  it('shows a stored run’s checkpoint step, and resumes from it with the replay plan', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    const run = manager.get('run-2')!;
    expect(run.status).toBe('stored');
    expect(run.checkpointStep).toBe(3);
    expect(workers).toHaveLength(0); // the step is read without a worker
    await manager.start(run);
    // Update 3 of 5: the worker restores it and replays updates 4 and 5.
    expect(workers[0]!.calls).toEqual(['createRun replay 5 from 3', 'start']);
    expect(run.status).toBe('running');
  });

  it('passes the whole replay plan along with the checkpoint', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    await manager.step(manager.get('run-2')!);
    const { replay, checkpoint } = workers[0]!.received;
    // The live change at update 4 comes after the checkpoint: the worker applies it in the replay.
    expect(replay).toEqual({ steps: 5, changes: [{ step: 4, changes: { lr: 2e-3 } }] });
    expect(checkpoint).toEqual(checkpointAt(3));
  });

  it('replays a stored run whose checkpoint is past its stored steps, and drops it', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(7) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    const run = manager.get('run-2')!;
    await manager.start(run);
    await settle();
    expect(workers[0]!.calls).toEqual(['createRun replay 5', 'start']);
    expect(checkpoints.kept.has('run-2')).toBe(false);
    expect(run.checkpointStep).toBeUndefined();
  });

  it('drops a refused checkpoint and brings the run back by replay in a fresh worker', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const refusal = 'checkpoint: 4 weights, but this model has 1234';
    const { manager, workers } = await setUp({
      checkpoints,
      stored: [storedLm],
      worker: { refuseCheckpoint: refusal },
    });
    const run = manager.get('run-2')!;
    await manager.start(run);
    await settle();
    expect(workers).toHaveLength(2);
    expect(workers[0]!.calls).toEqual(['createRun replay 5 from 3', 'dispose', 'terminate']);
    expect(workers[1]!.calls).toEqual(['createRun replay 5', 'start']);
    expect(run.status).toBe('running');
    expect(run.error).toBeUndefined();
    expect(run.backend?.line).toBe('CPU — test');
    expect(checkpoints.kept.has('run-2')).toBe(false);
    expect(run.checkpointStep).toBeUndefined();
    expect(manager.storageNote).toBe(
      `#2's checkpoint was refused, so it replays instead: ${refusal}`,
    );
  });

  it('ignores a stored checkpoint of another version (treated as absent)', async () => {
    const old = { ...checkpointAt(3), version: 0 } as unknown as RunCheckpoint;
    const checkpoints = memoryCheckpoints({ 'run-2': old });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    await manager.start(manager.get('run-2')!);
    expect(workers[0]!.calls).toEqual(['createRun replay 5', 'start']);
  });

  it('a fork at or after the run’s checkpoint starts from it; one before it replays', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    const later = manager.fork(manager.get('run-2')!, 4);
    const earlier = manager.fork(manager.get('run-2')!, 2);
    await settle();
    expect(later.checkpointStep).toBe(3);
    expect(earlier.checkpointStep).toBeUndefined();
    await manager.step(later);
    await manager.step(earlier);
    expect(workers.map((w) => w.calls[0])).toEqual([
      'createRun replay 4 from 3',
      'createRun replay 2',
    ]);
    expect(checkpoints.kept.get('run-2')?.step).toBe(3); // the original keeps its own
    // Deleting the fork removes its copy only.
    await manager.remove(later);
    await settle();
    expect(checkpoints.kept.has(later.id)).toBe(false);
    expect(checkpoints.kept.get('run-2')?.step).toBe(3);
  });

  it('an imported run resumes from the checkpoint its file carried; without one it replays', async () => {
    const checkpoints = memoryCheckpoints();
    const { manager, workers } = await setUp({ checkpoints });
    const data = { series: {}, events: [], config: {}, steps: 5 };
    const withCheckpoint = manager.addStored(lmSpec, (n) => `#${n} a`, data, checkpointAt(4));
    const without = manager.addStored(lmSpec, (n) => `#${n} b`, data);
    // A checkpoint after the file's updates cannot be resumed from: it is not kept.
    const ahead = manager.addStored(lmSpec, (n) => `#${n} c`, data, checkpointAt(6));
    expect(withCheckpoint.checkpointStep).toBe(4); // the card says so at once
    await settle();
    expect(checkpoints.kept.get(withCheckpoint.id)).toEqual(checkpointAt(4));
    expect(checkpoints.kept.has(ahead.id)).toBe(false);
    for (const run of [withCheckpoint, without, ahead]) await manager.step(run);
    expect(workers.map((w) => w.calls[0])).toEqual([
      'createRun replay 5 from 4',
      'createRun replay 5',
      'createRun replay 5',
    ]);
  });
});

describe('RunManager: a run whose worker died', () => {
  it('offers to resume from its last checkpoint, and does', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    const run = manager.get('run-2')!;
    await manager.step(run); // resumes from update 3, replays to 5
    expect(workers[0]!.calls[0]).toBe('createRun replay 5 from 3');
    workers[0]!.die('Uncaught Error: device lost');
    expect(run.status).toBe('error');
    expect(run.error).toBe(
      'Its worker stopped (Uncaught Error: device lost). Its 5 updates are kept; Resume brings ' +
        'it back: it resumes from its checkpoint at update 3, then replays 2 updates.',
    );
    await settle();
    await manager.start(run);
    expect(workers[1]!.calls.slice(0, 2)).toEqual(['createRun replay 5 from 3', 'start']);
    expect(run.status).toBe('running');
  });
});

describe('RunManager: an imported checkpoint that cannot be kept', () => {
  it('no longer says the run resumes from it, and notes why', async () => {
    // A store that refuses it (a structure IndexedDB cannot clone, a full disk).
    const checkpoints = memoryCheckpoints({}, 'Maximum call stack size exceeded');
    const { manager, workers } = await setUp({ checkpoints });
    const data = { series: {}, events: [], config: {}, steps: 5 };
    const run = manager.addStored(lmSpec, (n) => `#${n} a`, data, checkpointAt(4));
    expect(run.checkpointStep).toBe(4); // said at once, while it is being kept
    await settle();
    expect(run.checkpointStep).toBeUndefined();
    expect(resumeText(run.steps, run.checkpointStep)).toBe('replays its 5 updates');
    expect(manager.storageNote).toContain(
      'checkpoint could not be saved: Maximum call stack size exceeded',
    );
    await manager.step(run);
    expect(workers[0]!.calls[0]).toBe('createRun replay 5');
  });
});

describe('RunManager: a run’s file carries its checkpoint', () => {
  const fileCheckpoint = (json: string) =>
    (JSON.parse(json) as { checkpoint?: { step: number } }).checkpoint?.step;

  it('a stored run: its stored checkpoint', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    expect(fileCheckpoint(await manager.exportJson(manager.get('run-2')!))).toBe(3);
    expect(workers).toHaveLength(0); // read from the store, no worker started
  });

  it('a run with a worker: a fresh one from the worker, if its updates have been shown', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager, workers } = await setUp({ checkpoints, stored: [storedLm] });
    const run = manager.get('run-2')!;
    await manager.step(run); // builds the worker (it replays to update 5)
    expect(fileCheckpoint(await manager.exportJson(run))).toBe(5);
    expect(workers[0]!.calls.at(-1)).toBe('checkpoint');
    // The worker is ahead of the updates shown: the stored one (at 3) goes into the file instead.
    workers[0]!.at.step = 6;
    expect(fileCheckpoint(await manager.exportJson(run))).toBe(3);
  });

  it('none for an environment run or a language-model run without one', async () => {
    const { manager } = await setUp({ stored: [storedLm] });
    const env = manager.addStored(envSpec, (n) => `#${n} env`, {
      series: {},
      events: [],
      config: {},
      steps: 3,
    });
    expect(fileCheckpoint(await manager.exportJson(env))).toBeUndefined();
    expect(fileCheckpoint(await manager.exportJson(manager.get('run-2')!))).toBeUndefined();
  });
});

describe('RunManager: removing checkpoints', () => {
  it('removes a run’s checkpoint with the run', async () => {
    const checkpoints = memoryCheckpoints({ 'run-2': checkpointAt(3) });
    const { manager } = await setUp({ checkpoints, stored: [storedLm] });
    await manager.remove(manager.get('run-2')!);
    await settle();
    expect(checkpoints.log).toContain('remove run-2');
    expect(checkpoints.kept.size).toBe(0);
  });

  it('a save in flight when the run is deleted is not written back', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    workers[0]!.at.step = 6;
    await manager.pause(run); // its checkpoint is taken in the background…
    await manager.remove(run); // …and the run deleted before it lands
    await settle();
    expect(checkpoints.kept.size).toBe(0);
  });

  it('reset drops the checkpoint: the run starts another history', async () => {
    const { manager, workers, checkpoints } = await setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    workers[0]!.at.step = 5;
    await manager.pause(run);
    await settle();
    expect(run.checkpointStep).toBe(5);
    await manager.reset(run);
    await settle();
    expect(checkpoints.kept.size).toBe(0);
    expect(run.checkpointStep).toBeUndefined();
  });

  it('a new run never inherits a checkpoint left under its id', async () => {
    // run-1 was deleted on an earlier visit but its checkpoint stayed (a failed removal).
    const checkpoints = memoryCheckpoints({ 'run-1': checkpointAt(9) });
    const { manager } = await setUp({ checkpoints });
    const run = await manager.create(lmSpec);
    expect(run.id).toBe('run-1');
    await settle();
    expect(checkpoints.kept.size).toBe(0);
  });
});
