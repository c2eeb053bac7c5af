/**
 * A lab run as the compare view reads it (RunView and its metric Series), and that run as the
 * compare helpers' RunRecord (src/compare/run-record.ts), so the pure functions in src/compare/
 * work on live runs and stored snapshots alike.
 */
import { alignSeries, type RunRecord } from '../../compare/run-record';
import { own } from '../../util/own';
import type { RunEvent, RunSpec, Settings } from '../../worker/run-protocol';

/** A metric's history as the lab keeps it: update numbers and values, only updates that logged it. */
export interface Series {
  x: readonly number[];
  y: readonly number[];
}

/** What the compare view reads of a lab run (a LabRun, or a plain snapshot of one). */
export interface RunView {
  id: string;
  label: string;
  color: string;
  spec: Pick<RunSpec, 'algo' | 'env' | 'task' | 'taskOptions' | 'seed' | 'config' | 'sftSteps'>;
  series: Readonly<Record<string, Series>>;
  events: readonly RunEvent[];
}

/**
 * A run as the compare helpers' RunRecord. The config is the one the run was created with, plus
 * its task options as 'task.<name>' and its warm-up as 'sftSteps', so runs that differ only there
 * are neither grouped as seeds of one experiment nor shown as equal in the table. `metrics` holds
 * only the names given (aligning every metric of every run on every redraw would be wasted work).
 */
export function runRecord(run: RunView, metrics: readonly string[] = []): RunRecord {
  const config: Settings = { ...run.spec.config };
  for (const [key, value] of Object.entries(run.spec.taskOptions ?? {})) {
    config[`task.${key}`] = value;
  }
  if (run.spec.sftSteps !== undefined) config.sftSteps = run.spec.sftSteps;
  const picked: Record<string, Series> = {};
  for (const name of metrics) {
    const s = own(run.series, name);
    if (s) picked[name] = s;
  }
  return {
    algorithm: run.spec.algo,
    task: run.spec.env ?? run.spec.task ?? '',
    seed: run.spec.seed,
    config,
    metrics: alignSeries(picked),
    events: [...run.events],
  };
}
