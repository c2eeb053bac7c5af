/**
 * Holds lesson runs to their goals (lesson-goal.ts) after every batch of updates, in the state
 * layer, so that a run behaves the same whether or not its widget is on the page: its check
 * passing for the first time pauses it, and so does reaching its budget without passing. A path
 * check reads the run's grid, one request in flight per run. RunManager (runs.svelte.ts) owns it.
 */
import { pathCheckPassed, type Check } from '../lessons/checks';
import type { LabRun } from './lab-run.svelte';
import { budgetReached, metricGoalPassedAt, type GoalStop } from './lesson-goal';
import type { Inspection } from '../worker/run-protocol';

export interface RunGoalsOptions {
  pause(run: LabRun): Promise<void>;
  /** The run's last update (its grid, for a path check). */
  inspect(run: LabRun): Promise<Inspection | null>;
}

export class RunGoals {
  /** Runs whose grid is being read for their path check. */
  private readonly inspecting = new WeakSet<LabRun>();

  constructor(private readonly options: RunGoalsOptions) {}

  /** A batch of updates took `run` from `before` updates to run.steps. */
  updated(run: LabRun, before: number): void {
    const goal = run.goal;
    if (!goal || run.checkPassedAt !== undefined) return;
    const passedAt = metricGoalPassedAt(goal, run.series, before);
    if (passedAt !== undefined) return this.passed(run, passedAt);
    if (goal.check.kind === 'path') void this.checkPath(run, goal.check);
    if (budgetReached(goal, before, run.steps)) this.stop(run, 'budget');
  }

  private passed(run: LabRun, step: number): void {
    run.checkPassedAt = step;
    this.stop(run, 'check');
  }

  private stop(run: LabRun, why: GoalStop): void {
    run.stoppedBy = why;
    if (run.status === 'running') void this.options.pause(run);
  }

  /** Reads the grid until it has the latest update's (updates may come meanwhile). */
  private async checkPath(run: LabRun, check: Extract<Check, { kind: 'path' }>): Promise<void> {
    if (this.inspecting.has(run)) return;
    this.inspecting.add(run);
    try {
      let asked: number;
      do {
        asked = run.steps;
        const grid = await this.options.inspect(run).catch(() => null);
        if (run.checkPassedAt !== undefined || !run.goal) return;
        if (grid?.kind === 'grid' && pathCheckPassed(check, grid)) {
          return this.passed(run, grid.step);
        }
      } while (run.steps !== asked && run.port);
    } finally {
      this.inspecting.delete(run);
    }
  }
}
