/**
 * The RunManager's checkpoint bookkeeping for language-model runs: when to ask a run's worker for
 * its state (after a pause, before parking, every 30 s while it trains), keeping the latest one
 * per run in the store, and which one a stored run may resume from. Nothing here throws or blocks
 * a command on storage: a failure becomes a note, and the run falls back to replaying.
 */
import type { RunCheckpoint } from '../worker/run-checkpoint';
import type { RunStatus, RunWorkerApi } from '../worker/run-protocol';
import { errorText } from '../util/error-text';

/**
 * Where language-model runs keep their latest checkpoint (RunCheckpoint, ~1–2 MB for the lab's
 * model), so that a stored run resumes from it instead of replaying every update. One per run,
 * keyed by the run's id; the IndexedDB implementation lives beside the runs' in run-store.ts (the
 * same database), and reads its records with checkpointFromRecord.
 */
export interface CheckpointStorePort {
  /** Keeps `checkpoint` as the run's only one (an older one is replaced). */
  saveCheckpoint(id: string, checkpoint: RunCheckpoint): Promise<void>;
  /** The run's checkpoint; undefined when it has none, or one of another version or shape. */
  loadCheckpoint(id: string): Promise<RunCheckpoint | undefined>;
  removeCheckpoint(id: string): Promise<void>;
  /**
   * Run id → step of its checkpoint (this version's only), read without the weights: what the lab
   * says of a stored run before it is started.
   */
  checkpointSteps(): Promise<Map<string, number>>;
}

/** How often a training run is checkpointed, in ms. */
export const CHECKPOINT_EVERY_MS = 30_000;

/** How long parking waits for a checkpoint before it ends the worker anyway, in ms. */
export const PARK_WAIT_MS = 10_000;

/**
 * How long a worker may take to answer checkpoint(), in ms: an ended or stuck worker never
 * answers, and the run's later store operations wait for this one.
 */
export const ANSWER_MS = 30_000;

/** What the bookkeeping reads and writes of a run (LabRun in the app). */
export interface CheckpointedRun {
  readonly id: string;
  readonly label: string;
  readonly status: RunStatus;
  /** Updates done (and stored). */
  readonly steps: number;
  readonly port: { api: Pick<RunWorkerApi, 'checkpoint'> } | undefined;
  /** The step of its stored checkpoint, if it has one (shown on its card). */
  checkpointStep: number | undefined;
}

export interface RunCheckpointsOptions<R extends CheckpointedRun> {
  /** None: no checkpoints are taken or loaded. */
  store: CheckpointStorePort | undefined;
  everyMs?: number;
  /** false for runs that have none to give (environment algorithms): never asked. */
  wanted: (run: R) => boolean;
  /** Where failures go (the lab's storage note). */
  note: (text: string) => void;
}

const short = (run: CheckpointedRun) => run.label.split(' ')[0] ?? run.id;

/** `promise`, or what `late()` gives (or throws) if it has not settled after `ms`. */
function within<T>(promise: Promise<T>, ms: number, late: () => T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<T>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(late());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * What starting a stored run does, for its card: "replays its 40 updates", or with a usable
 * checkpoint (step ≤ the run's steps) "resumes from its checkpoint at update 30, then replays 10
 * updates".
 */
export function resumeText(steps: number, checkpointStep: number | undefined): string {
  if (checkpointStep === undefined || checkpointStep > steps) {
    return `replays its ${steps} update${steps === 1 ? '' : 's'}`;
  }
  const tail = steps - checkpointStep;
  const then = tail > 0 ? `, then replays ${tail} update${tail === 1 ? '' : 's'}` : '';
  return `resumes from its checkpoint at update ${checkpointStep}${then}`;
}

export class RunCheckpoints<R extends CheckpointedRun = CheckpointedRun> {
  private readonly timers = new Map<R, ReturnType<typeof setInterval>>();
  /**
   * Per run, the last store operation in flight: each waits for the one before, so the latest
   * checkpoint taken is the one kept, and a removal is never overtaken by an older save.
   */
  private readonly queues = new Map<R, Promise<unknown>>();
  /** Deleted runs: a save still in flight for one is not written. */
  private readonly gone = new WeakSet<R>();

  constructor(private readonly options: RunCheckpointsOptions<R>) {}

  /** Marks which of `runs` (just restored) have a checkpoint, without reading the weights. */
  async restore(runs: readonly R[]): Promise<void> {
    const store = this.options.store;
    if (!store || runs.length === 0) return;
    try {
      const steps = await store.checkpointSteps();
      for (const run of runs) run.checkpointStep = steps.get(run.id);
    } catch (error) {
      this.options.note(`checkpoints could not be read: ${errorText(error)}`);
    }
  }

  /** After a status change: a running run is checkpointed every `everyMs`; any other is not. */
  follow(run: R): void {
    if (run.status !== 'running' || !run.port) return this.stop(run);
    if (this.timers.has(run) || !this.options.store || !this.options.wanted(run)) return;
    const tick = () => {
      if (run.status === 'running' && run.port) void this.take(run);
      else this.stop(run);
    };
    this.timers.set(run, setInterval(tick, this.options.everyMs ?? CHECKPOINT_EVERY_MS));
  }

  /**
   * Asks the run's worker for its state now (it answers between updates) and keeps it as the
   * run's checkpoint. Resolves once stored, or after `waitMs` at most (the save goes on); never
   * rejects (a failure is noted).
   */
  take(run: R, waitMs?: number): Promise<void> {
    const { store, wanted, note } = this.options;
    const port = run.port;
    if (!store || !port || !wanted(run) || this.gone.has(run)) return Promise.resolve();
    const taken = this.enqueue(run, async () => {
      let checkpoint: RunCheckpoint | null;
      try {
        checkpoint = await within(port.api.checkpoint(), ANSWER_MS, () => {
          throw new Error(`the worker did not answer in ${ANSWER_MS / 1000} s`);
        });
      } catch (error) {
        if (!this.gone.has(run)) note(`${short(run)}: no checkpoint taken (${errorText(error)})`);
        return;
      }
      if (checkpoint) await this.keep(run, checkpoint);
    });
    return waitMs === undefined ? taken : within(taken, waitMs, () => undefined);
  }

  /**
   * The checkpoint a stored run resumes from: its own, taken at or before its stored steps. One
   * taken after them (its last updates were never stored) is dropped: the run's history from
   * there on may differ.
   */
  resumeFrom(run: R): Promise<RunCheckpoint | undefined> {
    const store = this.options.store;
    if (!store || run.steps === 0 || !this.options.wanted(run)) return Promise.resolve(undefined);
    return this.enqueue(run, async () => {
      let checkpoint: RunCheckpoint | undefined;
      try {
        checkpoint = await store.loadCheckpoint(run.id);
      } catch (error) {
        this.options.note(`${short(run)}'s checkpoint could not be read: ${errorText(error)}`);
      }
      if (checkpoint && checkpoint.step <= run.steps) {
        run.checkpointStep = checkpoint.step;
        return checkpoint;
      }
      // None, unreadable (another version or shape), or ahead of the stored run.
      if (checkpoint || run.checkpointStep !== undefined) void this.drop(run);
      return undefined;
    });
  }

  /**
   * The checkpoint a run's file carries: a fresh one from its worker when it has one (answered
   * between updates), else its stored one; only one taken at or before the run's shown updates,
   * since a file's metrics must cover its checkpoint. Undefined when there is none; never rejects.
   */
  async forExport(run: R): Promise<RunCheckpoint | undefined> {
    const { store, wanted } = this.options;
    if (!wanted(run) || run.steps === 0) return undefined;
    const fits = (c: RunCheckpoint | null | undefined) =>
      c && c.step <= run.steps ? c : undefined;
    let checkpoint: RunCheckpoint | undefined;
    if (run.port) {
      const port = run.port;
      checkpoint = fits(
        await within(port.api.checkpoint(), ANSWER_MS, () => null).catch(() => null),
      );
    }
    if (!checkpoint && store) {
      // After any save in flight, so the latest one kept is the one read.
      checkpoint = fits(
        await this.enqueue(run, () => store.loadCheckpoint(run.id)).catch(() => undefined),
      );
    }
    return checkpoint;
  }

  /** Keeps `checkpoint` (from an imported file) as the run's own. Never rejects. */
  adopt(run: R, checkpoint: RunCheckpoint): Promise<void> {
    return this.enqueue(run, () => this.keep(run, checkpoint));
  }

  /**
   * A fork of `from` at update `step`: it takes `from`'s stored checkpoint when that was taken at
   * or before `step` (it then replays only the updates after it). Never rejects.
   */
  copy(from: R, to: R, step: number): Promise<void> {
    const store = this.options.store;
    if (!store || !this.options.wanted(from)) return Promise.resolve();
    return this.enqueue(to, async () => {
      let checkpoint: RunCheckpoint | undefined;
      try {
        checkpoint = await this.enqueue(from, () => store.loadCheckpoint(from.id));
      } catch (error) {
        this.options.note(`${short(from)}'s checkpoint could not be read: ${errorText(error)}`);
      }
      if (checkpoint && checkpoint.step <= step) await this.keep(to, checkpoint);
    });
  }

  /** Stores `checkpoint` as the run's (unless it was deleted); a failure is noted. */
  private async keep(run: R, checkpoint: RunCheckpoint): Promise<void> {
    const store = this.options.store;
    if (!store || this.gone.has(run)) return;
    try {
      await store.saveCheckpoint(run.id, checkpoint);
      run.checkpointStep = checkpoint.step;
    } catch (error) {
      this.options.note(`${short(run)}'s checkpoint could not be saved: ${errorText(error)}`);
    }
  }

  /** Removes the run's checkpoint (after any save in flight): reset, refused, or a new run. */
  drop(run: R): Promise<void> {
    const store = this.options.store;
    if (!store) return Promise.resolve();
    return this.enqueue(run, async () => {
      run.checkpointStep = undefined;
      try {
        await store.removeCheckpoint(run.id);
      } catch (error) {
        this.options.note(`${short(run)}'s checkpoint could not be removed: ${errorText(error)}`);
      }
    });
  }

  /** The worker refused the run's checkpoint (`error`): noted, and dropped. */
  refused(run: R, error: unknown): Promise<void> {
    this.options.note(
      `${short(run)}'s checkpoint was refused, so it replays instead: ${errorText(error)}`,
    );
    return this.drop(run);
  }

  /** A deleted run: no more checkpoints, and its stored one is removed. */
  forget(run: R): Promise<void> {
    this.gone.add(run);
    this.stop(run);
    return this.drop(run);
  }

  private stop(run: R): void {
    const timer = this.timers.get(run);
    if (timer !== undefined) clearInterval(timer);
    this.timers.delete(run);
  }

  private enqueue<T>(run: R, task: () => Promise<T>): Promise<T> {
    const result = (this.queues.get(run) ?? Promise.resolve()).then(task);
    const tail = result.catch(() => {});
    this.queues.set(run, tail);
    void tail.then(() => {
      if (this.queues.get(run) === tail) this.queues.delete(run);
    });
    return result;
  }
}
