/**
 * The limit of runs at once (each run with a worker is a worker, and for language models a GPU
 * device): which run a lesson may park to make room. Going through the lessons must never stop
 * at the limit, and the lab's own runs are never parked for a lesson.
 */
import type { LabRun } from './lab-run.svelte';

/** How many runs have a worker now (stored runs do not count). */
export function liveCount(runs: readonly LabRun[]): number {
  return runs.filter((r) => r.port).length;
}

/**
 * At the limit, the run to park: the oldest lesson run that is not training, else the oldest
 * lesson run; none below the limit, or when no lesson run can go (`except`, busy ones).
 */
export function runToPark(
  runs: readonly LabRun[],
  maxRuns: number,
  except?: LabRun,
): LabRun | undefined {
  if (liveCount(runs) < maxRuns) return undefined;
  const lessons = runs.filter((r) => r.port && r.origin !== undefined && r !== except && !r.busy);
  return lessons.find((r) => r.status !== 'running') ?? lessons[0];
}
