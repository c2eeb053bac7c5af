/**
 * Where a lesson run stops by itself, whether or not its widget is on the page: when its widget's
 * check first passes (a widget always paused its run then), and, for a language model, when it
 * reaches its preset's budget of updates (presetBudget: the updates within which the lesson claims
 * its check). Without it a run left training in the background trained on for ever, taking turns
 * at training from the run on the reader's page. The run's worker judges a metric check and the
 * budget after every update and pauses the run at the update that reached them (workerGoal);
 * RunManager applies the rule again after every batch of updates (runs.svelte.ts), which marks
 * the run and judges a path check; the widget only shows what they did.
 */
import { metricCheckPassed, type Check } from '../lessons/checks';
import { PRESETS, presetBudget, type LessonPreset, type PresetName } from '../lessons/presets';
import type { Series } from './run-store';
import type { RunGoal } from '../worker/run-protocol';

/** What a lesson run trains toward; kept with the run (StoredRun.goal), so a reload keeps it. */
export interface LessonGoal {
  /** The widget's check (the lesson's `check="…"`, else the preset's). */
  check: Check;
  /**
   * Language models only: the preset's budget. Other presets have none — their checks take from
   * tens to a thousand updates of a second or so (tests/lessons/lessons.test.ts), and
   * DEFAULT_BUDGET would stop value iteration before it converges.
   */
  budget?: number;
}

/** Why the goal paused a run. */
export type GoalStop = 'check' | 'budget';

export function lessonGoal(preset: PresetName, check: Check): LessonGoal {
  const languageModel = (PRESETS[preset] as LessonPreset).task !== undefined;
  return languageModel ? { check, budget: presetBudget(preset) } : { check };
}

/**
 * Whether a batch of updates that took the run from `before` updates to `steps` reached its
 * budget: once, on the way past it, so that a reader who starts it again trains on.
 */
export function budgetReached(goal: LessonGoal, before: number, steps: number): boolean {
  return goal.budget !== undefined && before < goal.budget && steps >= goal.budget;
}

/**
 * The update at which a metric check first passed within the batch that took the run past
 * `before` updates (undefined: not passed; a path check needs the run's grid). Updates reach the
 * page in batches — a tabular run makes hundreds in one — so the pass is looked for within the
 * batch; the worker has stopped the run at that update (workerGoal).
 */
export function metricGoalPassedAt(
  goal: LessonGoal,
  series: Record<string, Series>,
  before: number,
): number | undefined {
  const check = goal.check;
  const { x = [], y = [] } = series[check.kind === 'metric' ? check.metric : ''] ?? {};
  if (check.kind !== 'metric' || !metricCheckPassed(check, y)) return undefined;
  // It had not passed by `before` (checked after each earlier batch): look among the new values.
  let n = x.findIndex((update) => update > before) + 1;
  if (n === 0) n = y.length;
  for (; n < y.length; n++) {
    if (metricCheckPassed(check, y.slice(0, n))) return x[n - 1];
  }
  return x[y.length - 1];
}

/**
 * Nothing left to train toward: its check passed, or its budget is spent. Such a run is not left
 * training once the reader leaves its lesson (RunManager.leave).
 */
export function goalMet(
  goal: LessonGoal,
  run: { steps: number; checkPassedAt: number | undefined },
): boolean {
  return run.checkPassedAt !== undefined || (goal.budget !== undefined && run.steps >= goal.budget);
}

/**
 * What the run's worker judges after every update when the run is started (RunGoal): the metric
 * check while it has not passed, with the values so far, and the budget while it lies ahead.
 * Undefined: nothing left for the worker to stop at (a path check stays with RunGoals, which
 * reads the run's grid).
 */
export function workerGoal(
  goal: LessonGoal | undefined,
  run: { steps: number; checkPassedAt: number | undefined; series: Record<string, Series> },
): RunGoal | undefined {
  if (!goal) return undefined;
  const check =
    goal.check.kind === 'metric' && run.checkPassedAt === undefined ? goal.check : undefined;
  const budget = goal.budget !== undefined && run.steps < goal.budget ? goal.budget : undefined;
  if (!check && budget === undefined) return undefined;
  return {
    ...(check ? { check: { ...check }, history: [...(run.series[check.metric]?.y ?? [])] } : {}),
    ...(budget !== undefined ? { budget } : {}),
  };
}

/** What a widget and a run card say of a run its goal paused. */
export function goalStopText(stop: GoalStop, goal: LessonGoal, checkPassedAt?: number): string {
  if (stop === 'check') {
    const at = checkPassedAt === undefined ? '' : ` at update ${checkPassedAt}`;
    return `Paused by its lesson: the check passed${at}. Start trains on.`;
  }
  return `Paused at its lesson's budget of ${goal.budget} updates, the check not passed. Start trains on.`;
}
