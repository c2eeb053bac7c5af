/**
 * Turns at training for the lab's run workers. Each worker trains in slices (one language-model
 * update, or about 12 ms of environment updates) and asks for a turn before each; at most
 * `capacity` slices run at once, and waiting runs are served first come, first served, so runs that
 * share the slots take turns slice by slice.
 *
 * Why: every worker that trains keeps a CPU core busy. With more runs training than the device
 * has cores to spare, the page's own thread (charts, sliders) waits for a core behind them and its
 * frames stretch (on a 2-core machine, four runs put the lab's p95 frame at about 50 ms). The lab
 * leaves one core for the page: capacity = cores − 1, at least 1.
 */

/** The lab's default: one core left for the page, at least one run training. */
export function defaultCapacity(cores: number | undefined): number {
  const known = Number.isInteger(cores) && (cores ?? 0) > 0 ? cores! : 4;
  return Math.max(1, known - 1);
}

/** One run's side of the slots: ask for a turn, give it back, or leave for good. */
export interface RunTurns {
  /** Resolves true when this run may train one slice, false if cancel() came first. */
  take(): Promise<boolean>;
  /** Ends this run's slice (nothing if it holds no turn). */
  give(): void;
  /** Stops waiting (a pause): the pending take() resolves false. Nothing if not waiting. */
  cancel(): void;
  /** The run's worker ended: its turn, held or awaited, goes to the next run. */
  close(): void;
}

interface Waiter {
  /** Takes a slot (the caller counted it) and resolves take() with true. */
  grant: () => void;
  /** Resolves take() without a slot. */
  settle: (granted: boolean) => void;
}

export class TrainingSlots {
  private busy = 0;
  /** Waiting runs, first come first served: each grant resolves one take(). */
  private readonly waiting: Waiter[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new Error(`training slots: capacity must be a whole number ≥ 1, got ${capacity}`);
    }
  }

  /** Slices training now. */
  get training(): number {
    return this.busy;
  }

  /** Runs waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** A run's handle. A run holds or awaits at most one turn: a second take() is refused. */
  forRun(): RunTurns {
    let holding = false;
    let closed = false;
    let waiter: Waiter | undefined;
    const give = () => {
      if (!holding) return;
      holding = false;
      this.busy -= 1;
      this.next();
    };
    const cancel = () => {
      if (!waiter) return;
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      const cancelled = waiter;
      waiter = undefined;
      cancelled.settle(false);
    };
    return {
      take: () => {
        if (closed) return Promise.reject(new Error('training slots: this run has ended'));
        if (holding || waiter) {
          return Promise.reject(new Error('training slots: this run already has a turn'));
        }
        return new Promise<boolean>((resolve) => {
          const entry: Waiter = {
            grant: () => {
              waiter = undefined;
              holding = true;
              resolve(true);
            },
            settle: resolve,
          };
          waiter = entry;
          this.waiting.push(entry);
          this.next();
        });
      },
      give,
      cancel,
      close: () => {
        closed = true;
        cancel();
        give();
      },
    };
  }

  private next(): void {
    while (this.busy < this.capacity && this.waiting.length > 0) {
      this.busy += 1;
      this.waiting.shift()!.grant();
    }
  }
}
