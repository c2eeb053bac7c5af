/** Which runs a button may act on; shared by a run's card and the list's "Start all". */
import type { LabRun } from './runs.svelte';

type Trainable = Pick<LabRun, 'busy' | 'status' | 'failure'>;

/** A run that can train now; one whose worker died trains again in a fresh one. */
export function canTrain(run: Trainable): boolean {
  return (
    !run.busy &&
    (run.status === 'idle' ||
      run.status === 'paused' ||
      run.status === 'stored' ||
      run.failure !== undefined)
  );
}

/** The runs "Start all" starts: those that can train and are not already running. */
export function startable<R extends Trainable>(runs: readonly R[]): R[] {
  return runs.filter((run) => run.status !== 'running' && canTrain(run));
}
