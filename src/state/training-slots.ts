/**
 * Turns at training for the lab's run workers. Each worker trains in slices (one language-model
 * update, or about 12 ms of environment updates), asks for a turn before each and says how long
 * it trained when it gives the turn back. At most `capacity` slices run at once; a freed slot goes
 * to the waiting run that has trained least so far (ties: the one that asked first), so runs that
 * share the slots get equal training time whatever their slices last: a q-learning run's 12 ms
 * slices are not starved by a language model's second-long updates.
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
  /** Ends this run's slice, which trained for `ms` (nothing if it holds no turn). */
  give(ms?: number): void;
  /**
   * give(ms) and take() in one step, so that the next grant already counts this slice: a run
   * that asks again right away is still served after runs that have trained less.
   */
  pass(ms: number): Promise<boolean>;
  /** Stops waiting (a pause): the pending take() resolves false. Nothing if not waiting. */
  cancel(): void;
  /** The run's worker ended: its turn, held or awaited, goes to the next run. */
  close(): void;
}

interface Account {
  /** Training time so far, ms, since the run last joined (see level()). */
  used: number;
  /** It holds a turn now. */
  holding: boolean;
  /** Its place in the queue, while it waits for a turn. */
  waiter: Waiter | undefined;
  closed: boolean;
}

interface Waiter {
  account: Account;
  /** Order of asking, for ties. */
  ticket: number;
  /** Takes a slot (the caller counted it) and resolves take() with true. */
  grant: () => void;
  /** Resolves take() without a slot. */
  settle: (granted: boolean) => void;
}

export class TrainingSlots {
  private busy = 0;
  private tickets = 0;
  private readonly waiting: Waiter[] = [];
  private readonly accounts = new Set<Account>();

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
    const account: Account = { used: 0, holding: false, waiter: undefined, closed: false };
    this.accounts.add(account);
    /** Ends the held turn, counting `ms` (no grant yet: the caller calls next()). */
    const release = (ms: number) => {
      account.holding = false;
      if (Number.isFinite(ms) && ms > 0) account.used += ms;
      this.busy -= 1;
    };
    /** Joins the queue (no grant yet: the caller calls next()). */
    const enqueue = () =>
      new Promise<boolean>((resolve) => {
        account.waiter = {
          account,
          ticket: this.tickets++,
          grant: () => {
            account.waiter = undefined;
            account.holding = true;
            resolve(true);
          },
          settle: resolve,
        };
        this.waiting.push(account.waiter);
      });
    const refusal = (): Error | undefined => {
      if (account.closed) return new Error('training slots: this run has ended');
      if (account.waiter) return new Error('training slots: this run already waits for a turn');
      return undefined;
    };
    const take = () => {
      const refused =
        refusal() ??
        (account.holding ? new Error('training slots: this run already has a turn') : undefined);
      if (refused) return Promise.reject(refused);
      this.level(account);
      const granted = enqueue();
      this.next();
      return granted;
    };
    const give = (ms = 0) => {
      if (!account.holding) return;
      release(ms);
      this.next();
    };
    const cancel = () => {
      const cancelled = account.waiter;
      if (!cancelled) return;
      this.waiting.splice(this.waiting.indexOf(cancelled), 1);
      account.waiter = undefined;
      cancelled.settle(false);
    };
    return {
      take,
      give,
      pass: (ms) => {
        const refused = refusal();
        if (refused) return Promise.reject(refused);
        if (account.holding) release(ms);
        const granted = enqueue();
        this.next();
        return granted;
      },
      cancel,
      close: () => {
        account.closed = true;
        this.accounts.delete(account);
        cancel();
        give();
      },
    };
  }

  /**
   * A run (re)joining the contest — new, or started again after a pause — is set level with the
   * least-trained run contending now: it neither waits while others make up time it trained
   * before nor is owed the time it sat out. (Between slices a run passes its turn and keeps its
   * count.)
   */
  private level(account: Account): void {
    let least = Infinity;
    for (const other of this.accounts) {
      if (other !== account && (other.holding || other.waiter)) least = Math.min(least, other.used);
    }
    if (least < Infinity) account.used = least;
  }

  /** Fills free slots: least training time first, then first asked. */
  private next(): void {
    while (this.busy < this.capacity && this.waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) {
        const [w, b] = [this.waiting[i]!, this.waiting[best]!];
        if (
          w.account.used < b.account.used ||
          (w.account.used === b.account.used && w.ticket < b.ticket)
        ) {
          best = i;
        }
      }
      const [chosen] = this.waiting.splice(best, 1);
      this.busy += 1;
      chosen!.grant();
    }
  }
}
