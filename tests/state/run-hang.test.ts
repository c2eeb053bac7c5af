/**
 * A run whose worker hangs (no error event, no reply) must not hang its card: the manager's
 * HangWatch (src/worker/worker-hang.ts) fails the run with the reason once a call has had no sign
 * of life for HANG_AFTER_MS + HANG_GRACE_MS (found within 2·HANG_AFTER_MS + HANG_GRACE_MS), keeps
 * its data and brings it back on Resume. Fake
 * timers: the minutes pass at once.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RunManager, type RunPort } from '../../src/state/runs.svelte';
import type { RunMessage, RunSpec, TrainingTurns } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';
import { HANG_AFTER_MS, HANG_GRACE_MS } from '../../src/worker/worker-hang';
import { TrainingSlots } from '../../src/state/training-slots';

const LIMIT = HANG_AFTER_MS + HANG_GRACE_MS;

/** A run worker stand-in whose pause() never answers when `hangs`, and that never errors. */
function fakeWorker(hangs: boolean) {
  const calls: string[] = [];
  let listener: ((message: RunMessage) => void) | undefined;
  const send = (message: RunMessage) => listener?.(message);
  const received: { turns?: TrainingTurns } = {};
  const port: RunPort = {
    api: {
      async createRun(_spec, onMessage, replay, _checkpoint, turns) {
        calls.push(replay ? `createRun replay ${JSON.stringify(replay)}` : 'createRun');
        listener = onMessage;
        received.turns = turns;
        send({ type: 'status', status: 'idle' });
      },
      async start() {
        calls.push('start');
        send({ type: 'status', status: 'running' });
      },
      async pause() {
        calls.push('pause');
        if (hangs) return new Promise<void>(() => {});
        send({ type: 'status', status: 'paused' });
      },
      step: async () => {},
      setHyperparams: async () => ({ ok: true, appliesAt: 1 }),
      inspect: async () => null,
      inspectKept: async () => [],
      exportOnnx: async () => null,
      checkpoint: async () => null,
      dispose: async () => {},
    },
    terminate: () => calls.push('terminate'),
    onFailure: () => {}, // it never dies: it hangs
  };
  return { port, calls, send, received };
}

const spec: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: { epsilon: 0.1, initialQ: 0 },
  backend: 'auto',
};

function setUp(hangs: boolean[], slots?: TrainingSlots) {
  const workers: ReturnType<typeof fakeWorker>[] = [];
  const manager = new RunManager({
    catalog: { runCatalog: async () => runCatalog(), checkRunSpec: async () => [] },
    spawn: () => {
      const worker = fakeWorker(hangs[workers.length] ?? false);
      workers.push(worker);
      return worker.port;
    },
    slots,
  });
  return { manager, workers };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('a run whose worker hangs', () => {
  it('is marked failed with the reason, keeps its data, and resumes in a new worker', async () => {
    vi.useFakeTimers();
    const { manager, workers } = setUp([true]);
    const run = await manager.create(spec);
    await manager.start(run);
    workers[0]!.send({
      type: 'update',
      points: [1, 2].map((step) => ({ step, metrics: { 'charts/episodic_return': -step } })),
      events: [],
      config: spec.config,
    });
    let paused = false;
    void manager.pause(run).then(() => (paused = true));
    await vi.advanceTimersByTimeAsync(HANG_AFTER_MS);
    expect(run.busy).toBe(true); // still within the limit: a slow update is not a hang
    // The checks run every HANG_AFTER_MS from the first call: it is found within two of them.
    await vi.advanceTimersByTimeAsync(HANG_AFTER_MS + HANG_GRACE_MS);
    expect(paused).toBe(true);
    expect(run.busy).toBe(false);
    expect(run.status).toBe('error');
    expect(run.failure).toBe(`it answered nothing for ${LIMIT / 1000} s`);
    expect(run.error).toBe(
      `Its worker stopped (it answered nothing for ${LIMIT / 1000} s). Its 2 updates are kept; ` +
        'Resume brings it back: it replays its 2 updates.',
    );
    expect(run.port).toBeUndefined();
    expect(workers[0]!.calls.at(-1)).toBe('terminate');
    expect(run.series['charts/episodic_return']).toEqual({ x: [1, 2], y: [-1, -2] });

    await manager.start(run);
    expect(workers).toHaveLength(2);
    expect(workers[1]!.calls.slice(0, 2)).toEqual([
      'createRun replay {"steps":2,"changes":[]}',
      'start',
    ]);
    expect(run.status).toBe('running');
    expect(run.failure).toBeUndefined();
  });

  it('is not failed while its messages keep coming, nor while it waits for a turn', async () => {
    vi.useFakeTimers();
    const slots = new TrainingSlots(1);
    const { manager, workers } = setUp([true], slots);
    const run = await manager.create(spec);
    await manager.start(run);
    void manager.pause(run);
    // An update that takes long but reports: messages are signs of life.
    for (let t = 0; t < 4 * LIMIT; t += HANG_AFTER_MS / 2) {
      workers[0]!.send({ type: 'status', status: 'running' });
      await vi.advanceTimersByTimeAsync(HANG_AFTER_MS / 2);
    }
    expect(run.status).toBe('running');
    // Waiting for its turn while another run trains: silent, but the page's doing.
    const other = slots.forRun();
    expect(await other.take()).toBe(true);
    void workers[0]!.received.turns!.take();
    await vi.advanceTimersByTimeAsync(4 * LIMIT);
    expect(run.status).toBe('running');
    expect(run.failure).toBeUndefined();
  });
});
