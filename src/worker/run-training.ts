/**
 * A run's updates (run-host.ts): single ones, and the training loop that runs them slice by slice
 * until the run is paused, by the user or by a lesson's goal, or fails. It moves the run's state
 * (run-state.ts) for what happens inside it: a goal reached (pause), the loop's end after a pause
 * (stopped), an update that throws (fail).
 */
import { errorText } from '../util/error-text';
import { timedUpdate, type Metrics, type Trainer } from '../rl/trainer';
import type { UpdateBoundary } from './run-boundary';
import { macrotask } from './run-build';
import type { GoalWatch } from './run-goal';
import type { KeptUpdates } from './run-kept';
import type { RunMessages } from './run-messages';
import type { Settings } from './run-protocol';
import type { RunLife } from './run-state';
import type { RunTurns } from './run-turns';

export class TrainingLoop {
  /** The training loop, or the single step, under way (resolved when none is). */
  current: Promise<void> = Promise.resolve();
  /** The lesson goal of the current start, judged after each of its updates. */
  goal: GoalWatch | undefined;

  constructor(
    private readonly life: RunLife,
    private readonly messages: RunMessages,
    private readonly boundary: UpdateBoundary,
    private readonly turns: RunTurns,
    private readonly sliceMs: number,
    private readonly kept: KeptUpdates,
  ) {}

  /** One update; its metrics go out with the next batch. */
  async update(active: Trainer<Settings>): Promise<Metrics> {
    const metrics = await this.boundary.update(() => timedUpdate(active));
    this.messages.add(active.step, metrics);
    this.kept.offer(active, metrics);
    return metrics;
  }

  /** An update or a step threw: the run fails (unless it is being disposed) and says why. */
  readonly fail = (error: unknown): void => {
    if (!this.life.can('fail')) return;
    this.life.move('fail');
    this.life.failure = errorText(error);
    this.messages.flush();
    this.messages.emit({ type: 'status', status: 'error', error: errorText(error) });
  };

  /**
   * Trains slice by slice until paused: a slice is updates until `sliceMs` has passed (at least
   * one), then a yield to the message loop. Where the lab hands out turns, each slice waits for
   * one, and its time is counted when it passes the turn on.
   */
  async run(active: Trainer<Settings>): Promise<void> {
    const training = () => this.life.state === 'training';
    try {
      let granted = await this.turns.next();
      while (granted) {
        const sliceStart = performance.now();
        do {
          const metrics = await this.update(active);
          if (this.goal?.reached(active.step, metrics)) {
            this.goal = undefined; // reached: a later start brings its own
            this.life.move('pause'); // it pauses itself, as pause() would
          }
          await this.boundary.drain();
        } while (training() && performance.now() - sliceStart <= this.sliceMs);
        const ms = performance.now() - sliceStart;
        await macrotask(); // a pause, an inspection or a live change comes in here
        granted = await this.turns.next(ms);
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.boundary.activity = 'idle';
      await this.boundary.drain();
    }
    // Paused (by pause() or by the goal) rather than failed or disposed: say so.
    if (this.life.state === 'pausing') this.finishPause(active);
  }

  /**
   * The end of a pause, once the training loop has stopped: the last metrics, the last update's
   * inspection (language models), then 'paused'.
   */
  private finishPause(active: Trainer<Settings>): void {
    this.messages.flush();
    const inspections = this.kept.withLast(active);
    if (inspections) this.messages.emit({ type: 'inspections', ...inspections });
    this.life.move('stopped');
    this.messages.emit({ type: 'status', status: 'paused' });
  }
}
