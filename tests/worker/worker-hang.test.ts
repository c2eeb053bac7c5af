/**
 * Hung workers (no error, no reply): HangWatch's rule, the watched API it guards, and the lab
 * worker (backend probe, run catalog, spec checks) started through it. Timers are vitest's fake
 * ones: the minutes of silence pass at once and in order.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startLabWorker } from '../../src/worker/client';
import {
  HANG_AFTER_MS,
  HANG_GRACE_MS,
  HangWatch,
  trackCalls,
  watchedApi,
  watchRequests,
} from '../../src/worker/worker-hang';

const LIMIT = HANG_AFTER_MS + HANG_GRACE_MS;
const REASON = `it answered nothing for ${LIMIT / 1000} s`;

/** A Worker stand-in: an EventTarget that swallows messages and counts terminate() calls. */
class SilentWorker extends EventTarget {
  static started: SilentWorker[] = [];
  terminated = 0;
  constructor() {
    super();
    SilentWorker.started.push(this);
  }
  postMessage(): void {}
  terminate(): void {
    this.terminated += 1;
  }
}

/** Whether `promise` has settled, after the microtasks queued so far have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  await vi.advanceTimersByTimeAsync(0);
  return done;
}

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  SilentWorker.started = [];
});

describe('HangWatch', () => {
  it('reports a worker hung after the limit and a second look, once, only with a call pending', async () => {
    vi.useFakeTimers();
    const heard: string[] = [];
    const watch = new HangWatch({ onHang: (reason) => heard.push(reason) });
    // Idle: nothing asked of it, so its silence is allowed however long.
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toEqual([]);
    watch.track(new Promise(() => {}));
    await vi.advanceTimersByTimeAsync(HANG_AFTER_MS);
    expect(heard).toEqual([]); // the first silent check only looks again
    await vi.advanceTimersByTimeAsync(HANG_GRACE_MS);
    expect(heard).toEqual([REASON]);
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toHaveLength(1);
  });

  it('keeps a worker that shows signs of life, or waits on the page, or has answered', async () => {
    vi.useFakeTimers();
    const heard: string[] = [];
    const watch = new HangWatch({ onHang: (reason) => heard.push(reason) });
    // A long update: the call is pending for 10 limits, but messages keep coming.
    watch.track(new Promise(() => {}));
    for (let t = 0; t < 10 * LIMIT; t += HANG_AFTER_MS / 2) {
      watch.alive();
      await vi.advanceTimersByTimeAsync(HANG_AFTER_MS / 2);
    }
    expect(heard).toEqual([]);
    // Silent, but waiting for its turn at training: the page's doing.
    let grant!: (value: boolean) => void;
    void watch.waitOn(new Promise<boolean>((resolve) => (grant = resolve)));
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toEqual([]);
    // Granted, then silent again with its call still pending: hung.
    grant(true);
    await vi.advanceTimersByTimeAsync(2 * LIMIT);
    expect(heard).toEqual([REASON]);
  });

  it('stops counting once the calls settle, and never reports after stop()', async () => {
    vi.useFakeTimers();
    const heard: string[] = [];
    const watch = new HangWatch({ onHang: (reason) => heard.push(reason) });
    await watch.track(Promise.resolve(1));
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toEqual([]);
    watch.track(new Promise(() => {}));
    watch.stop();
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toEqual([]);
  });

  it('tracks the calls of a watched API and the requests of a watched handler', async () => {
    vi.useFakeTimers();
    const heard: string[] = [];
    const watch = new HangWatch({ onHang: (reason) => heard.push(reason) });
    const api = trackCalls(
      { answer: async (x: number) => x + 1, hang: () => new Promise<never>(() => {}), size: 2 },
      watch,
    );
    expect(await api.answer(1)).toBe(2);
    expect(api.size).toBe(2);
    expect(await Promise.resolve(api)).toBe(api); // not a thenable
    let grant!: () => void;
    const turns = watchRequests(
      { take: () => new Promise<void>((resolve) => (grant = resolve)), size: 3 },
      watch,
    );
    expect(turns.size).toBe(3);
    void api.hang();
    void turns.take();
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(heard).toEqual([]);
    grant();
    await vi.advanceTimersByTimeAsync(2 * LIMIT);
    expect(heard).toEqual([REASON]);
  });
});

describe('watchedApi', () => {
  it('rejects pending and later calls of a hung worker with the reason, and ends it', async () => {
    vi.useFakeTimers();
    const worker = new SilentWorker();
    const calls: string[] = [];
    const api = watchedApi('lab', worker, {
      runCatalog: () => (calls.push('runCatalog'), new Promise<never>(() => {})),
    });
    const pending = api.runCatalog();
    const outcome = pending.catch((error: Error) => error.message);
    await vi.advanceTimersByTimeAsync(LIMIT);
    expect(await outcome).toBe(`the lab worker stopped (${REASON})`);
    expect(worker.terminated).toBe(1);
    await expect(api.runCatalog()).rejects.toThrow(`the lab worker stopped (${REASON})`);
    expect(calls).toEqual(['runCatalog']);
  });

  it("rejects with a dead worker's reason, and its hang watch then says nothing more", async () => {
    vi.useFakeTimers();
    const worker = new SilentWorker();
    const api = watchedApi('lab', worker, { runCatalog: () => new Promise<never>(() => {}) });
    const outcome = api.runCatalog().catch((error: Error) => error.message);
    worker.dispatchEvent(Object.assign(new Event('error'), { message: 'Uncaught Error: boom' }));
    expect(await outcome).toBe('the lab worker stopped (Uncaught Error: boom)');
    await vi.advanceTimersByTimeAsync(10 * LIMIT);
    expect(worker.terminated).toBe(1);
  });
});

describe('startLabWorker', () => {
  it('does not leave the run catalog waiting for ever on a lab worker that died', async () => {
    vi.stubGlobal('Worker', SilentWorker);
    vi.useFakeTimers();
    const lab = startLabWorker();
    const catalog = lab.runCatalog();
    expect(await settled(catalog)).toBe(false);
    SilentWorker.started[0]!.dispatchEvent(new Event('error'));
    expect(await settled(catalog)).toBe(true);
    await expect(catalog).rejects.toThrow(
      'the lab worker stopped (its script failed to load or it crashed)',
    );
  });

  it('does not leave a spec check waiting for ever on a lab worker that hangs', async () => {
    vi.stubGlobal('Worker', SilentWorker);
    vi.useFakeTimers();
    const lab = startLabWorker();
    const check = lab.checkRunSpec({ algo: 'q-learning', seed: 1, config: {}, backend: 'auto' });
    // The handler is attached before the silence passes: a rejection with none attached yet is
    // reported as unhandled, however soon the test would have attached one.
    const outcome = check.then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(await settled(check)).toBe(false);
    await vi.advanceTimersByTimeAsync(LIMIT);
    expect(await settled(check)).toBe(true);
    expect(await outcome).toBe(`the lab worker stopped (${REASON})`);
    expect(SilentWorker.started[0]!.terminated).toBe(1);
  });
});
