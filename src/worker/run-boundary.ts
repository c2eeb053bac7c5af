/**
 * Work that must not interleave with an update, because it may use the model (an inspection, an
 * ONNX export, a checkpoint: sync points on the GPU): queued, and run between updates.
 */
import type { RunActivity } from './run-state';

export class UpdateBoundary {
  /** What the run's thread is doing now: a live change during an update waits for the next. */
  activity: RunActivity = 'idle';
  private queued: (() => Promise<void>)[] = [];
  /** Between-update work started while the loop waited for a turn. */
  private duringWait: Promise<void> = Promise.resolve();

  /** `training()`: whether the loop is running; `loop()`: the training loop's promise now. */
  constructor(
    private readonly training: () => boolean,
    private readonly loop: () => Promise<void>,
  ) {}

  /** Runs what is queued, in order. */
  readonly drain = async (): Promise<void> => {
    const queued = this.queued;
    this.queued = [];
    for (const task of queued) await task();
  };

  /**
   * Runs `fn` when no update is in progress: now if idle or waiting for a turn (the loop awaits
   * it before its next update), else after the current update.
   */
  at<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push(() => fn().then(resolve, reject));
      if (!this.training()) void this.loop().then(this.drain);
      else if (this.activity === 'awaiting-turn')
        this.duringWait = this.duringWait.then(this.drain);
    });
  }

  /** One update: a live change made meanwhile applies from the update after it. */
  async update<T>(run: () => Promise<T>): Promise<T> {
    this.activity = 'updating';
    try {
      return await run();
    } finally {
      this.activity = 'idle';
    }
  }

  /** The loop waits for a turn: what is queued runs meanwhile, and so does what comes in. */
  waiting(): void {
    this.activity = 'awaiting-turn';
    this.duringWait = this.duringWait.then(this.drain);
  }

  /** The wait is over: resolves once what ran during it has finished. */
  async waited(): Promise<void> {
    this.activity = 'idle';
    await this.duringWait;
  }
}
