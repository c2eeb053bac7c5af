/**
 * What a run tells its page (run-host.ts): status, backend and progress messages at once, and the
 * metrics of its updates in batches, at most one per `flushMs`, each bucketed to `maxPoints`.
 */
import type { Metrics, Trainer } from '../rl/trainer';
import { bucketPoints } from './metric-buckets';
import type { MetricPoint, RunListener, RunMessage, Settings } from './run-protocol';

export class RunMessages {
  /** The page's listener, from createRun() until dispose(). */
  listener: RunListener | undefined;
  private points: MetricPoint[] = [];
  private sentEvents = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When metrics were last sent (performance.now()). */
  private lastFlush = -Infinity;

  /** `source()` is the built trainer whose events and settings go with the metrics, if any. */
  constructor(
    private readonly source: () => Trainer<Settings> | undefined,
    private readonly flushMs: number,
    private readonly maxPoints: number,
  ) {}

  readonly emit = (message: RunMessage): void => {
    // A comlink-proxied listener returns a promise; a closed page must not break training.
    void Promise.resolve(this.listener?.(message)).catch(() => {});
  };

  /** The trainer's first `count` events count as sent (a replay's are the saved run's). */
  eventsSent(count: number): void {
    this.sentEvents = count;
  }

  /** Sends the metrics and events not sent yet, now. */
  readonly flush = (): void => {
    this.stop();
    this.lastFlush = performance.now();
    const trainer = this.source();
    if (!trainer) return;
    const events = trainer.events.slice(this.sentEvents);
    if (this.points.length === 0 && events.length === 0) return;
    this.sentEvents = trainer.events.length;
    const sent = bucketPoints(this.points, this.maxPoints);
    this.emit({ type: 'update', points: sent, events, config: { ...trainer.config } });
    this.points = [];
  };

  /** One update's metrics: sent with the next batch. */
  add(step: number, metrics: Metrics): void {
    this.points.push({ step, metrics });
    // Sent now once flushMs has passed since the last batch. A timer cannot fire while the next
    // update holds the worker's thread: a language model's second-long update would then reach
    // the page only after the next one had finished too, and the reader, seeing an update behind,
    // made live changes that landed two or three updates after the one on the screen.
    const since = performance.now() - this.lastFlush;
    if (since >= this.flushMs) this.flush();
    else this.timer ??= setTimeout(this.flush, this.flushMs - since);
  }

  /** Cancels a batch that waits for its time (a flush or the run's end). */
  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
