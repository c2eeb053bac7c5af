/**
 * The lab's turns at training (src/state/training-slots.ts), as a run's worker takes them: a slice
 * of training waits for a turn and passes it on after `sliceMs`; one-time work that trains (a
 * warm-up, a reward model, a replay) goes on turns too. Without turns (Node) everything runs
 * straight through.
 */
import type { UpdateBoundary } from './run-boundary';
import type { TrainingTurns } from './run-protocol';

export class RunTurns {
  /** The lab's turns, from createRun() (none: train freely). */
  turns: TrainingTurns | undefined;

  /** `training()`: whether the run is in its training state now. */
  constructor(
    private readonly sliceMs: number,
    private readonly boundary: UpdateBoundary,
    private readonly training: () => boolean,
  ) {}

  /**
   * Whether to train another slice: without turns, while running; with them, once the lab grants
   * one (after `ms` of training, if this run held one). A paused run gives its turn back.
   */
  async next(ms?: number): Promise<boolean> {
    const turns = this.turns;
    if (!turns) return this.training();
    if (!this.training()) {
      if (ms !== undefined) await this.giveBack(ms);
      return false;
    }
    this.boundary.waiting(); // what came in before the wait runs during it
    const granted = await (ms === undefined ? turns.take() : turns.pass(ms));
    await this.boundary.waited(); // an inspection or checkpoint answered during the wait
    if (granted && !this.training()) {
      await this.giveBack(0);
      return false;
    }
    return granted;
  }

  /** Ends a held turn after `ms` of training. A lab that has gone cannot take it: no failure. */
  giveBack(ms: number): Promise<void> {
    return Promise.resolve(this.turns?.give(ms)).catch(() => {});
  }

  /** A pause while the run waits for a turn: stop waiting (the loop then ends). */
  stopWaiting(): void {
    const turns = this.turns;
    if (this.boundary.activity === 'awaiting-turn' && turns) {
      void Promise.resolve(turns.cancel()).catch(() => {});
    }
  }

  /**
   * Runs one-time work that trains on turns, as training runs: it takes a turn first, passes it
   * on at a `yieldPoint` once a slice of `sliceMs` has gone by, and gives it back at the end, also
   * on failure.
   */
  async on<T>(work: (yieldPoint: () => Promise<void>) => Promise<T>): Promise<T> {
    const held = this.turns;
    if (!held) return work(async () => {});
    await held.take();
    let sliceStart = performance.now();
    try {
      return await work(async () => {
        if (performance.now() - sliceStart <= this.sliceMs) return;
        await held.pass(performance.now() - sliceStart);
        sliceStart = performance.now();
      });
    } finally {
      await this.giveBack(performance.now() - sliceStart);
    }
  }
}
