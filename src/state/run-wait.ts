/**
 * What a lesson widget says while the reader waits on its run: the phase it is in (loading the
 * model, warm-up, generating, updating), about how long to its check at the run's own trend
 * (lessons/check-text.ts), and, secondary, how long to the lesson's budget of updates, from the
 * seconds its updates measured. A first language-model update takes seconds on the CPU; an empty
 * chart with no word of why reads as a hang.
 */
import { checkEtaText, durationText, secondsEach } from '../lessons/check-text';
import type { Check } from '../lessons/checks';
import type { RunStatus, UpdatePhase } from '../worker/run-protocol';

/** The parts of a LabRun the phase is read from. */
export interface WaitingRun {
  status: RunStatus;
  phase: { phase: UpdatePhase; update: number } | undefined;
  steps: number;
  warmup: { done: number; total: number } | undefined;
  rewardModel: { done: number; total: number; report?: unknown } | undefined;
  replay: { done: number; total: number } | undefined;
}

/**
 * The run's phase in words (a stored run: where Start goes on from); undefined when there is
 * nothing to wait for (idle, paused, a stored run with no updates).
 */
export function phaseText(run: WaitingRun, languageModel: boolean): string | undefined {
  if (run.status === 'warming') {
    const { rewardModel, warmup, replay } = run;
    if (rewardModel && !rewardModel.report) {
      return `training the reward model: step ${rewardModel.done} of ${rewardModel.total}`;
    }
    if (warmup && warmup.done < warmup.total) {
      return `warm-up: supervised step ${warmup.done} of ${warmup.total}`;
    }
    if (replay && replay.done < replay.total) {
      return `catching up: update ${replay.done} of ${replay.total} replayed`;
    }
    return languageModel ? 'loading the model' : 'building the run';
  }
  if (run.status === 'stored' && run.steps > 0) {
    return `kept from before: Start goes on from update ${run.steps}`;
  }
  if (run.status !== 'running') return undefined;
  if (run.phase?.phase === 'generating') return `update ${run.phase.update}: generating answers`;
  if (run.phase?.phase === 'updating') return `update ${run.phase.update}: updating the policy`;
  return run.steps === 0 ? 'starting the first update' : undefined;
}

/**
 * About how long until update `budget`, from the seconds per update measured so far (the
 * 'timing_s/step' series); undefined before two updates were measured or once the budget is
 * reached, where an estimate would be a guess or has no meaning.
 */
export function timeLeftText(
  secondsPerUpdate: readonly number[],
  steps: number,
  budget: number,
): string | undefined {
  const left = budget - steps;
  const each = secondsEach(secondsPerUpdate);
  if (each === undefined || left <= 0) return undefined;
  const updates = left === 1 ? '1 update' : `${left} updates`;
  return `about ${durationText(each * left)} left: ${updates} to ${budget} at ${each.toFixed(1)} s each`;
}

/** The parts of a LabRun the whole wait line is read from. */
export interface TimedRun extends WaitingRun {
  spec: { task?: string };
  series: Record<string, { y: readonly number[] }>;
  /** A lesson run's budget (lesson-goal.ts); a lab run has none. */
  goal: { budget?: number; check?: Check } | undefined;
  checkPassedAt: number | undefined;
}

/**
 * What a lesson widget and a lab run card both say while a run is waited on: its phase; where the
 * run has a metric check not yet passed (a lesson run), about how long to it at the run's own
 * trend (toCheck); and where it has a budget (a lesson run of a language model), how long to
 * that (timeLeft) — a secondary line: a run's check passes well before its budget, as a rule.
 * A lab run has neither: its phase alone.
 */
export function waitLine(run: TimedRun): { phase?: string; toCheck?: string; timeLeft?: string } {
  const languageModel = run.spec.task !== undefined;
  const phase = phaseText(run, languageModel);
  const budget = run.goal?.budget;
  const check = run.goal?.check;
  const waiting = run.status === 'running' && run.checkPassedAt === undefined;
  const timings = run.series['timing_s/step']?.y ?? [];
  const timeLeft =
    waiting && languageModel && budget !== undefined
      ? timeLeftText(timings, run.steps, budget)
      : undefined;
  const toCheck =
    waiting && check?.kind === 'metric'
      ? checkEtaText(
          check,
          run.series[check.metric]?.y ?? [],
          timings,
          budget === undefined ? undefined : Math.max(budget - run.steps, 0),
        )
      : undefined;
  return {
    ...(phase ? { phase } : {}),
    ...(toCheck ? { toCheck } : {}),
    ...(timeLeft ? { timeLeft } : {}),
  };
}
