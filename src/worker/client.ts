/** Starts workers and returns their typed comlink proxies. */
import { wrap, type Remote } from 'comlink';
import type { ChatWorkerApi } from './chat-protocol';
import type { LabWorkerApi } from './lab-protocol';
import type { LoraWorkerApi } from './lora-protocol';
import type { RunWorkerApi } from './run-protocol';
import { watchWorker } from './worker-failure';
import { watchedApi } from './worker-hang';

/** A run worker: its API, and how to end it (after dispose(), which frees its GPU buffers). */
export interface RunWorkerHandle {
  api: Remote<RunWorkerApi>;
  terminate(): void;
  /** Calls `listener` once if the worker dies (worker-failure.ts); it is then ended. */
  onFailure(listener: (reason: string) => void): void;
}

/**
 * Starts the lab worker (backend probe, run catalog, spec checks). If it dies or hangs, every call
 * to it, pending or later, rejects with the reason (worker-hang.ts) instead of waiting for ever.
 */
export function startLabWorker(): Remote<LabWorkerApi> {
  const worker = new Worker(new URL('./lab.worker.ts', import.meta.url), {
    type: 'module',
    name: 'lab',
  });
  return watchedApi('lab', worker, wrap<LabWorkerApi>(worker));
}

let runWorkers = 0;

/** Starts one worker for one training run. */
export function startRunWorker(): RunWorkerHandle {
  runWorkers += 1;
  const worker = new Worker(new URL('./run.worker.ts', import.meta.url), {
    type: 'module',
    name: `run-${runWorkers}`,
  });
  const watch = watchWorker(worker);
  return {
    api: wrap<RunWorkerApi>(worker),
    terminate: () => worker.terminate(),
    onFailure: (listener) => watch.onFailure(listener),
  };
}

/** Starts one worker for one LoRA run on a brought model (lora.worker.ts). */
export function startLoraWorker(): { api: Remote<LoraWorkerApi>; terminate: () => void } {
  const worker = new Worker(new URL('./lora.worker.ts', import.meta.url), {
    type: 'module',
    name: 'lora',
  });
  return {
    api: watchedApi('lora', worker, wrap<LoraWorkerApi>(worker)),
    terminate: () => worker.terminate(),
  };
}

/** A chat worker's API, and how to end it. */
export interface ChatWorkerHandle {
  api: Remote<ChatWorkerApi>;
  terminate(): void;
}

/** Starts the worker that answers a brought model's chat on the CPU (chat.worker.ts). */
export function startChatWorker(): ChatWorkerHandle {
  const worker = new Worker(new URL('./chat.worker.ts', import.meta.url), {
    type: 'module',
    name: 'chat',
  });
  return {
    api: watchedApi('chat', worker, wrap<ChatWorkerApi>(worker)),
    terminate: () => worker.terminate(),
  };
}
