/**
 * A curriculum: train on the easiest rung of a task until the policy passes it reliably, then move
 * up. The scheduler watches the pass rate (the batch's verified fraction, `reward/accuracy`) after
 * every update and raises the level once the rate has stayed at or above `threshold` for `patience`
 * updates in a row; the streak starts over at each new level. It never lowers the level (a harder
 * rung starts below the threshold by design).
 */
import { checkConfig, type ConfigSpec } from '../util/hyperparams';
import type { RunEvent } from './trainer';

export interface CurriculumConfig {
  /** Pass rate that counts as "passing" a rung, in (0, 1]. Default 0.8. */
  threshold: number;
  /** Consecutive passing updates before moving up, ≥ 1. Default 5. */
  patience: number;
}

export const DEFAULT_CURRICULUM_CONFIG: Readonly<CurriculumConfig> = Object.freeze({
  threshold: 0.8,
  patience: 5,
});

export const CURRICULUM_CONFIG_SPEC: ConfigSpec<CurriculumConfig> = {
  threshold: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: 'pass rate (verified fraction of a batch) that counts as passing a rung',
  },
  patience: {
    kind: 'int',
    min: 1,
    max: 1000,
    live: true,
    doc: 'consecutive passing updates before the task moves to the next rung',
  },
};

export class CurriculumScheduler {
  private streak = 0;
  private current: number;

  /** `levels` rungs (≥ 1), starting at `start` (default 0). */
  constructor(
    readonly levels: number,
    readonly config: CurriculumConfig = DEFAULT_CURRICULUM_CONFIG,
    start = 0,
  ) {
    checkConfig('curriculum', CURRICULUM_CONFIG_SPEC, config);
    checkConfig(
      'curriculum',
      {
        levels: { kind: 'int', min: 1, max: 1000, live: false, doc: 'rungs' },
        start: { kind: 'int', min: 0, max: levels - 1, live: false, doc: 'first rung' },
      },
      { levels, start },
    );
    this.current = start;
  }

  get level(): number {
    return this.current;
  }

  /** Level and streak, for a checkpoint. */
  state(): { level: number; streak: number } {
    return { level: this.current, streak: this.streak };
  }

  /** Throws unless `state` is a level and streak this curriculum can be at. */
  checkState(state: { level: number; streak: number }): void {
    const { level, streak } = state;
    if (!Number.isInteger(level) || level < 0 || level >= this.levels) {
      throw new Error(`checkpoint: curriculum level must be 0…${this.levels - 1}, got ${level}`);
    }
    if (!Number.isInteger(streak) || streak < 0) {
      throw new Error(`checkpoint: curriculum streak must be a whole number ≥ 0, got ${streak}`);
    }
  }

  /** Back to a checkpoint's level and streak (checked first). */
  restore(state: { level: number; streak: number }): void {
    this.checkState(state);
    this.current = state.level;
    this.streak = state.streak;
  }

  /** Feeds one update's pass rate (NaN counts as failing); returns true when the level moved up. */
  // #region streak
  observe(passRate: number): boolean {
    this.streak = passRate >= this.config.threshold ? this.streak + 1 : 0;
    if (this.streak < this.config.patience || this.current === this.levels - 1) return false;
    this.current += 1;
    this.streak = 0;
    return true;
    // #endregion streak
  }
}

/** A trainer's curriculum as its setup gives it: the scheduler and each rung's task. */
export interface CurriculumSetup<T> {
  scheduler: CurriculumScheduler;
  taskAt(level: number): T;
}

/**
 * The task a language-model trainer samples from, with or without a curriculum: after each update
 * `observe` feeds the pass rate to the scheduler and, when it moves up, switches to the next rung's
 * task (from the next update) and records a 'curriculum' event. Shared by GRPO and PPO.
 */
export class TaskLadder<T extends { readonly name: string }> {
  private current: T;

  constructor(
    first: T,
    readonly curriculum: CurriculumSetup<T> | undefined,
  ) {
    this.current = curriculum ? curriculum.taskAt(curriculum.scheduler.level) : first;
  }

  get task(): T {
    return this.current;
  }

  /**
   * After update `step`: its metrics' `curriculum/level` (the rung it trained on; none without a
   * curriculum), and an event in `events` when the level moves up.
   */
  observe(passRate: number, step: number, events: RunEvent[]): Record<string, number> {
    const curriculum = this.curriculum;
    if (!curriculum) return {};
    const level = curriculum.scheduler.level;
    if (curriculum.scheduler.observe(passRate)) {
      this.current = curriculum.taskAt(curriculum.scheduler.level);
      events.push({
        step,
        kind: 'curriculum',
        level: curriculum.scheduler.level,
        task: this.current.name,
      });
    }
    return { 'curriculum/level': level };
  }

  /** After a checkpoint restored the scheduler: the task of its level. */
  sync(): void {
    if (this.curriculum) this.current = this.curriculum.taskAt(this.curriculum.scheduler.level);
  }
}
