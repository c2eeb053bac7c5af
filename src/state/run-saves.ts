/**
 * Keeping the lab's runs across page loads: each run's changes are saved at most every
 * `everyMs` (at once after a pause or a park), and with them its last update's inspection, read
 * from its worker at most every INSPECT_EVERY_MS (kept-inspection.ts bounds it), so that a stored
 * run can still be inspected.
 */
import { keptInspection, keptUpdates } from './kept-inspection';
import type { LabRun } from './lab-run.svelte';
import type { RunStorePort } from './run-store';
import { errorText } from '../util/error-text';

/** A training run's last update is read for keeping (LabRun.inspection) at most this often, in ms. */
export const INSPECT_EVERY_MS = 5000;
/** How long keeping an inspection waits for the worker before saving without it, in ms. */
const INSPECT_WAIT_MS = 2000;

/** `promise`, or undefined once `ms` have passed (a stuck worker must not hold a save back). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export interface RunSavesOptions {
  /** Where runs are kept (IndexedDB in the app); none: nothing is saved. */
  store?: RunStorePort;
  /** A run's changes are saved at most this often, in ms. Default 1000. */
  everyMs?: number;
  /** Whether the run is still in the lab (a deleted run is never saved again). */
  kept(run: LabRun): boolean;
  /** Why a save failed, for the lab to show. */
  note(text: string): void;
}

export class RunSaves {
  private readonly timers = new Map<LabRun, ReturnType<typeof setTimeout>>();
  /** When each run's last update was last read for keeping (performance.now()). */
  private readonly inspectedAt = new WeakMap<LabRun, number>();

  constructor(private readonly options: RunSavesOptions) {}

  schedule(run: LabRun, delay = this.options.everyMs ?? 1000): void {
    const store = this.options.store;
    if (!store) return;
    // A save already waiting covers this one, unless this one is asked for at once (a pause, a
    // park): then it goes now, so a reload right after a pause still finds the last update.
    const pending = this.timers.get(run);
    if (pending !== undefined) {
      if (delay > 0) return;
      clearTimeout(pending);
    }
    const timer = setTimeout(() => {
      this.timers.delete(run);
      // A save asked for at once (a pause, a park) keeps the last update whatever its age.
      void this.keepInspection(run, delay === 0).then(() => {
        if (!this.options.kept(run)) return;
        store.save(run.toStored()).catch((error: unknown) => {
          this.options.note(`runs could not be saved: ${errorText(error)}`);
        });
      });
    }, delay);
    this.timers.set(run, timer);
  }

  /**
   * Saves the run as it is now, without reading its inspection first (a worker may take up to
   * INSPECT_WAIT_MS to answer, and a reader may reload the page meanwhile): what a pause
   * acknowledges is already in storage when it resolves. A save with the inspection may follow.
   */
  async saveNow(run: LabRun): Promise<void> {
    const store = this.options.store;
    if (!store || !this.options.kept(run)) return;
    try {
      await store.save(run.toStored());
    } catch (error) {
      this.options.note(`runs could not be saved: ${errorText(error)}`);
    }
  }

  /** A deleted run: its waiting save is dropped. */
  cancel(run: LabRun): void {
    const timer = this.timers.get(run);
    if (timer !== undefined) clearTimeout(timer);
    this.timers.delete(run);
  }

  /** The run's inspection was just read on request (the inspector): the next read can wait. */
  inspected(run: LabRun): void {
    this.inspectedAt.set(run, performance.now());
  }

  /**
   * Reads the run's last update into LabRun.inspection, and (`now`) its earlier kept ones into
   * LabRun.kept (to be saved with it): at most every
   * INSPECT_EVERY_MS unless `now`, only when it has an update not yet kept, and never waiting more
   * than INSPECT_WAIT_MS on its worker.
   */
  async keepInspection(run: LabRun, now = false): Promise<void> {
    const port = run.port;
    if (!port || run.steps === 0 || run.inspection?.step === run.steps) return;
    const last = this.inspectedAt.get(run);
    if (!now && last !== undefined && performance.now() - last < INSPECT_EVERY_MS) return;
    this.inspectedAt.set(run, performance.now());
    try {
      const fresh = await within(port.api.inspect(), INSPECT_WAIT_MS);
      if (fresh && run.port === port) run.inspection = keptInspection(fresh);
      // The earlier updates worth opening (worker/kept-updates.ts): read when a pause or a park
      // saves the run (the inspector reads them on request), not with every periodic save.
      if (now) {
        const earlier = await within(port.api.inspectKept(), INSPECT_WAIT_MS);
        if (earlier && run.port === port) run.kept = keptUpdates(run.kept, earlier);
      }
    } catch {
      // Kept as it was; the next save reads it again.
    }
  }
}
