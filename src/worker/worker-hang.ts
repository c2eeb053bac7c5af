/**
 * A worker that hangs — stuck in a loop, or waiting for ever on something of its own — raises no
 * error event, so worker-failure.ts never hears of it, and the calls made to it never settle: a
 * run's card would wait on Pause for ever, the run catalog would never load. HangWatch notices
 * it instead: while a call to the worker is pending, the worker must show a sign of life (a
 * message, a call settling, a request to the page) at least every `afterMs`; after that much
 * silence and a second look `graceMs` later (a page that was asleep gets to read the worker's
 * queued messages first), it reports the worker hung. The checks run on timers alone (no clock
 * is read), every `afterMs` from the first call, so a hang is found between afterMs + graceMs
 * and 2·afterMs + graceMs after the last sign of life.
 *
 * Only silence with a call pending counts: an idle or paused worker sends nothing and is asked
 * nothing. Time the worker spends waiting on the page (its turn at training, TrainingSlots) is
 * the page's doing and never counts. The limit is generous: the longest silent stretch of a
 * healthy worker is one update or one model build, seconds long.
 */
import { aroundCalls, isThenable } from './call-proxy';
import { guardApi, watchWorker, WorkerFailure, type WatchedWorker } from './worker-failure';

/** Silence, with a call pending, after which a worker is taken for hung, in ms. */
export const HANG_AFTER_MS = 120_000;
/** The second look's delay, in ms. */
export const HANG_GRACE_MS = 5_000;

export interface HangWatchOptions {
  /** Default HANG_AFTER_MS. */
  afterMs?: number;
  /** Default HANG_GRACE_MS. */
  graceMs?: number;
  /** Called once, with the reason, when the worker is taken for hung. */
  onHang(reason: string): void;
}

export class HangWatch {
  /** Calls to the worker not yet settled. */
  private pending = 0;
  /** The worker's requests to the page not yet answered: while any is, it waits on us. */
  private waiting = 0;
  /** Signs of life so far; a check compares it with the count when it was armed. */
  private beats = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /**
   * watching: checks every afterMs. suspect: the last check found silence, and the next one,
   * graceMs later, decides. stopped: hung, or the worker was ended; no more checks.
   */
  private phase: 'watching' | 'suspect' | 'stopped' = 'watching';
  private readonly afterMs: number;
  private readonly graceMs: number;

  constructor(private readonly options: HangWatchOptions) {
    this.afterMs = options.afterMs ?? HANG_AFTER_MS;
    this.graceMs = options.graceMs ?? HANG_GRACE_MS;
  }

  /** A sign of life: a message from the worker. */
  alive(): void {
    this.beats += 1;
  }

  /** Watches a call made to the worker: until it settles, silence counts. */
  track<T>(call: Promise<T>): Promise<T> {
    this.pending += 1;
    const settled = () => {
      this.pending -= 1;
      this.beats += 1;
    };
    call.then(settled, settled);
    this.arm();
    return call;
  }

  /** Watches the worker's request to the page: silence while it waits for `answer` is ours. */
  waitOn<T>(answer: Promise<T>): Promise<T> {
    this.waiting += 1;
    this.beats += 1;
    const answered = () => {
      this.waiting -= 1;
      this.beats += 1;
    };
    answer.then(answered, answered);
    return answer;
  }

  /** Stops watching (the worker was ended). */
  stop(): void {
    this.phase = 'stopped';
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.phase === 'stopped' || this.timer !== undefined) return;
    const seen = this.beats;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.check(seen);
      },
      this.phase === 'suspect' ? this.graceMs : this.afterMs,
    );
  }

  private check(seen: number): void {
    if (this.phase === 'stopped') return;
    if (this.pending === 0) {
      this.phase = 'watching'; // nothing asked of it: its silence is allowed; the next call re-arms
      return;
    }
    if (this.beats !== seen || this.waiting > 0) this.phase = 'watching';
    else if (this.phase === 'watching') this.phase = 'suspect';
    else {
      this.stop();
      const seconds = Math.round((this.afterMs + this.graceMs) / 1000);
      this.options.onHang(`it answered nothing for ${seconds} s`);
      return;
    }
    this.arm();
  }
}

/** `api` whose every call's promise is watched by `watch` (see HangWatch.track). */
export function trackCalls<T extends object>(api: T, watch: HangWatch): T {
  return aroundCalls(api, (invoke) => {
    const call = invoke();
    return isThenable(call) ? watch.track(Promise.resolve(call)) : call;
  });
}

/**
 * `handler`, an object of the page's that the worker calls (through comlink) and waits on, whose
 * every method's promise counts as the worker waiting on the page (see HangWatch.waitOn).
 */
export function watchRequests<T extends object>(handler: T, watch: HangWatch): T {
  return aroundCalls(handler, (invoke) => {
    watch.alive(); // the request itself is a sign of life
    const answer = invoke();
    return isThenable(answer) ? watch.waitOn(Promise.resolve(answer)) : answer;
  });
}

/**
 * `api` of a started worker, watched for both ways a worker stops answering: it dies
 * (worker-failure.ts) or it hangs (HangWatch). Either way the worker is ended and every call,
 * pending or later, rejects with `Error("the <name> worker stopped (<reason>)")`.
 */
export function watchedApi<T extends object>(
  name: string,
  worker: WatchedWorker,
  api: T,
  options: Omit<HangWatchOptions, 'onHang'> = {},
): T {
  const failure = new WorkerFailure();
  const fail = (reason: string) => {
    hang.stop();
    failure.fail(new Error(`the ${name} worker stopped (${reason})`));
  };
  const hang = new HangWatch({
    ...options,
    onHang: (reason) => {
      worker.terminate();
      fail(reason);
    },
  });
  watchWorker(worker).onFailure(fail);
  return guardApi(trackCalls(api, hang), failure);
}
