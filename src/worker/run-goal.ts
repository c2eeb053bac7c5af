/**
 * A lesson run's goal as the worker judges it (RunGoal in run-protocol.ts): after every update of
 * a start, whether its metric check has just passed or its budget is reached, so that run-host.ts
 * pauses the run at that very update. The goal is checked when it arrives, each field in its
 * range, so that one the worker cannot judge is refused with the field named, not never reached.
 */
import type { Metrics } from '../rl/trainer';
import { metricCheckPassed } from './metric-check';
import type { RunGoal } from './run-protocol';

export class GoalWatch {
  /** The check's metric: the values before this start, then each update's. */
  private readonly values: number[];

  private constructor(
    private readonly goal: RunGoal,
    private readonly budget: number | undefined,
  ) {
    this.values = [...(goal.history ?? [])];
  }

  /**
   * The watch of `goal` for a run at update `step`, or undefined with nothing to watch. A budget
   * is reached on the way past it: a run started again beyond it trains on.
   */
  static start(goal: RunGoal | undefined, step: number): GoalWatch | undefined {
    if (goal === undefined) return undefined;
    checkRunGoal(goal);
    const budget = goal.budget !== undefined && goal.budget > step ? goal.budget : undefined;
    return goal.check || budget !== undefined ? new GoalWatch(goal, budget) : undefined;
  }

  /** Whether the update that brought the run to `step` with `metrics` reached the goal. */
  reached(step: number, metrics: Metrics): boolean {
    const check = this.goal.check;
    const value = check ? metrics[check.metric] : undefined;
    if (check && value !== undefined) {
      this.values.push(value);
      if (metricCheckPassed(check, this.values)) return true;
    }
    return step === this.budget;
  }
}

const OPS = ['>=', '<=', '>', '<'];

export function checkRunGoal(goal: RunGoal): void {
  const { check, history, budget } = goal;
  if (budget !== undefined && !(Number.isInteger(budget) && budget >= 1)) {
    throw new Error(`goal.budget must be a whole number ≥ 1, got ${String(budget).slice(0, 40)}`);
  }
  if (history !== undefined && !(Array.isArray(history) && history.every(Number.isFinite))) {
    throw new Error('goal.history must be an array of finite numbers');
  }
  if (check === undefined) return;
  if (check.kind !== 'metric' || typeof check.metric !== 'string' || check.metric === '') {
    throw new Error("goal.check must be a metric check with the metric's name");
  }
  if (!OPS.includes(check.op)) {
    throw new Error(`goal.check.op must be one of ${OPS.join(', ')}, got ${String(check.op)}`);
  }
  if (!Number.isFinite(check.value)) throw new Error('goal.check.value must be a finite number');
  if (!(Number.isInteger(check.after) && check.after >= 1)) {
    throw new Error('goal.check.after must be a whole number ≥ 1');
  }
}
