/**
 * Real workers that die, in Chromium: the 'error' event of a worker whose script throws, or that
 * throws while answering a call, is turned into one failure, and comlink calls pending on it (which
 * would otherwise never settle) reject with it.
 */
import { wrap } from 'comlink';
import { describe, expect, it } from 'vitest';
import { guardApi, watchWorker, WorkerFailure } from '../../src/worker/worker-failure';

/** A classic worker from source text. */
function workerFrom(source: string): Worker {
  return new Worker(URL.createObjectURL(new Blob([source], { type: 'text/javascript' })));
}

const failureOf = (worker: Worker) =>
  new Promise<string>((resolve) => watchWorker(worker).onFailure(resolve));

describe('watchWorker and guardApi with real workers', () => {
  it('reports a worker whose script throws as it starts', async () => {
    const worker = workerFrom('throw new Error("no adapter for this run");');
    expect(await failureOf(worker)).toMatch(/no adapter for this run/);
  });

  it('rejects a comlink call pending on a worker that throws instead of answering', async () => {
    // Answers nothing: every message makes it throw, as a worker that crashed mid-update would.
    const worker = workerFrom('self.onmessage = () => { throw new Error("out of memory"); };');
    const failure = new WorkerFailure();
    watchWorker(worker).onFailure((reason) => failure.fail(new Error(`stopped: ${reason}`)));
    const api = guardApi(wrap<{ pause(): Promise<void> }>(worker), failure);
    // It settles: without the guard it would hang until the test's own timeout failed it.
    await expect(api.pause()).rejects.toThrow(/stopped: .*out of memory/);
    // Later calls do not reach it, and fail at once.
    await expect(api.pause()).rejects.toThrow(/stopped: .*out of memory/);
  });

  it('leaves a healthy worker alone: its calls answer as before', async () => {
    const worker = workerFrom(
      'self.onmessage = (e) => e.ports[0] ? null : self.postMessage(e.data);',
    );
    let failed = false;
    watchWorker(worker).onFailure(() => (failed = true));
    const echoed = new Promise((resolve) =>
      worker.addEventListener('message', (e) => resolve(e.data)),
    );
    worker.postMessage('ping');
    expect(await echoed).toBe('ping');
    expect(failed).toBe(false);
    worker.terminate();
  });
});
