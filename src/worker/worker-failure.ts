/**
 * A worker that dies — an uncaught error, a script that fails to load, a message that cannot be
 * read — answers none of the calls made to it: comlink's promises for them never settle, so a run
 * would say "running" forever and Pause would wait for ever. watchWorker turns the worker's
 * 'error' and 'messageerror' events into one failure (and ends the worker, whose state is unknown
 * after an error escaped it); guardApi makes every call to its API, pending or later, reject with
 * that failure instead of hanging.
 */

import { aroundCalls } from './call-proxy';

/** What watchWorker needs of a Worker. */
export type WatchedWorker = Pick<Worker, 'addEventListener' | 'terminate'>;

export interface WorkerWatch {
  /** Calls `listener` once with the reason when the worker fails (at once if it already has). */
  onFailure(listener: (reason: string) => void): void;
}

/** Watches `worker` for the events that mean it can no longer answer. */
export function watchWorker(worker: WatchedWorker): WorkerWatch {
  let reason: string | undefined;
  const listeners: ((reason: string) => void)[] = [];
  const fail = (why: string) => {
    if (reason !== undefined) return;
    reason = why;
    worker.terminate();
    for (const listener of listeners.splice(0)) listener(why);
  };
  worker.addEventListener('error', (event) => {
    // Handled here: the reason goes to the run's card, not only to the console.
    event.preventDefault();
    fail(errorReason(event));
  });
  worker.addEventListener('messageerror', () => fail('a message from it could not be read'));
  return {
    onFailure(listener) {
      if (reason !== undefined) listener(reason);
      else listeners.push(listener);
    },
  };
}

/** An 'error' event's reason: its message where it has one (a script error), else a load failure. */
function errorReason(event: Event): string {
  const message = (event as ErrorEvent).message;
  return typeof message === 'string' && message !== ''
    ? message
    : 'its script failed to load or it crashed';
}

/** A worker's failure, once it happens: what guardApi's calls reject with. */
export class WorkerFailure {
  error: Error | undefined;
  /** Rejects with `error` when the worker fails; never resolves. */
  readonly failed: Promise<never>;
  private reject!: (error: Error) => void;

  constructor() {
    this.failed = new Promise<never>((_, reject) => (this.reject = reject));
    this.failed.catch(() => {}); // it rejects the calls in flight, and there may be none
  }

  fail(error: Error): void {
    if (this.error) return;
    this.error = error;
    this.reject(error);
  }
}

/**
 * `api` whose every method call settles: as `api`'s does, or with the failure's error once the
 * worker fails (a call made after that rejects at once, without reaching the worker).
 */
export function guardApi<T extends object>(api: T, failure: WorkerFailure): T {
  return aroundCalls(api, (invoke) =>
    failure.error ? Promise.reject(failure.error) : Promise.race([failure.failed, invoke()]),
  );
}
