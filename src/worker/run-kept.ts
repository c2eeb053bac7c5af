/**
 * The updates a language-model run keeps for the inspector besides its last (kept-updates.ts says
 * which): offered each update's metrics, it reads the trainer's inspection only for an update it
 * keeps. Environment runs keep none.
 */
import type { Metrics, Trainer } from '../rl/trainer';
import { keepUpdate } from './kept-updates';
import type { Inspection, KeptInspection, Settings } from './run-protocol';

export class KeptUpdates {
  /** Whether this run keeps updates (language models only). */
  enabled = false;
  /** The metric whose rise is kept: a lesson goal's, else the mean reward. */
  metric = 'reward/mean';
  private kept: KeptInspection[] = [];
  /** The metric at the update before. */
  private previous: number | undefined;

  /** Offers the update just made (between updates: the inspection is read at once). */
  offer(active: Trainer<Settings>, metrics: Metrics): void {
    if (!this.enabled || !active.inspect) return;
    const value = metrics[this.metric];
    const gain =
      this.previous === undefined || value === undefined ? undefined : value - this.previous;
    if (value !== undefined) this.previous = value;
    this.kept = keepUpdate(
      this.kept,
      active.step,
      gain,
      () => {
        const read = active.inspect!();
        // A language model's inspection is read at once; one that is awaited is not kept.
        return read instanceof Promise ? undefined : (read as Inspection | undefined);
      },
      this.metric,
    );
  }

  /**
   * The last update's inspection with the earlier kept ones, where this run keeps updates and its
   * trainer reads one at once (between updates).
   */
  withLast(active: Trainer<Settings>): { last: Inspection; earlier: KeptInspection[] } | undefined {
    if (!this.enabled || !active.inspect || active.step === 0) return undefined;
    const last = active.inspect();
    if (last instanceof Promise || !last) return undefined;
    return { last, earlier: this.list() };
  }

  list(): KeptInspection[] {
    return [...this.kept];
  }
}
