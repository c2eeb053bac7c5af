/** Starts workers and returns their typed comlink proxies. */
import { wrap, type Remote } from 'comlink';
import type { LabWorkerApi } from './protocol';
import type { RunWorkerApi } from './run-protocol';

/** A run worker: its API, and how to end it (after dispose(), which frees its GPU buffers). */
export interface RunWorkerHandle {
  api: Remote<RunWorkerApi>;
  terminate(): void;
}

export function startLabWorker(): Remote<LabWorkerApi> {
  const worker = new Worker(new URL('./lab.worker.ts', import.meta.url), {
    type: 'module',
    name: 'lab',
  });
  return wrap<LabWorkerApi>(worker);
}

let runWorkers = 0;

/** Starts one worker for one training run. */
export function startRunWorker(): RunWorkerHandle {
  runWorkers += 1;
  const worker = new Worker(new URL('./run.worker.ts', import.meta.url), {
    type: 'module',
    name: `run-${runWorkers}`,
  });
  return { api: wrap<RunWorkerApi>(worker), terminate: () => worker.terminate() };
}
