/**
 * The token tasks a language-model run trains on: its one task built from its options, or — with a
 * curriculum — every rung of the task's difficultyLevels, easiest first. The model's context must
 * hold the longest of them, and the warm-up trains on the first.
 */
import {
  createTokenTask,
  createTokenTaskAtLevel,
  TOKEN_TASKS,
  type TokenTaskName,
} from '../agents/token-task-registry';
import type { CharsetTask } from '../envs/token-tasks/shared';
import { CurriculumScheduler, type CurriculumConfig } from '../rl/curriculum';
import type { LmSetup } from '../rl/registry';
import type { RunSpec } from './run-protocol';

export interface RunTasks {
  /** The task the run starts on (and warms up on). */
  first: CharsetTask;
  /** Longest prompt + answer over every task the run may reach or retain, in characters. */
  maxChars: number;
  /** The retained task (RunSpec.retained), built from its options. */
  retained?: CharsetTask;
  /** The curriculum's rungs (absent without a curriculum). */
  levels?: { count: number; taskAt(level: number): CharsetTask };
}

/** Throws the task's own OpInputError for an unknown task or bad options. */
export function runTasks(
  spec: Pick<RunSpec, 'task' | 'taskOptions' | 'curriculum' | 'retained'>,
): RunTasks {
  const trained = trainedTasks(spec);
  if (!spec.retained) return trained;
  const retained = createTokenTask(spec.retained.task, spec.retained.taskOptions ?? {});
  return { ...trained, retained, maxChars: Math.max(trained.maxChars, retained.maxChars) };
}

function trainedTasks(spec: Pick<RunSpec, 'task' | 'taskOptions' | 'curriculum'>): RunTasks {
  const name = spec.task ?? 'reverse';
  if (!spec.curriculum) {
    const task = createTokenTask(name, spec.taskOptions ?? {});
    return { first: task, maxChars: task.maxChars };
  }
  const first = createTokenTaskAtLevel(name as TokenTaskName, 0);
  const count = TOKEN_TASKS[name as TokenTaskName].difficultyLevels.length;
  const taskAt = (level: number) => createTokenTaskAtLevel(name as TokenTaskName, level);
  let maxChars = 0;
  for (let level = 0; level < count; level++) maxChars = Math.max(maxChars, taskAt(level).maxChars);
  return { first, maxChars, levels: { count, taskAt } };
}

/** The trainer's curriculum (LmSetup.curriculum) over the rungs, or none without a curriculum. */
export function curriculumSetup(
  tasks: RunTasks,
  config: CurriculumConfig | undefined,
): LmSetup['curriculum'] {
  if (!tasks.levels || !config) return undefined;
  return {
    scheduler: new CurriculumScheduler(tasks.levels.count, config),
    taskAt: tasks.levels.taskAt,
  };
}
