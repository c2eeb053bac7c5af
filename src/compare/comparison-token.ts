/**
 * The comparison link's token for a set of run specs (the lab's share panel, a lesson's "open
 * these runs in the lab"): each run's algorithm, task, seed and settings, with only the options
 * that differ from the task's defaults, so links stay short.
 */
import type { RetainedTaskSpec, RunSpec, Settings } from '../worker/run-protocol';
import type { CompareCatalog } from './run-record';
import { encodeComparison } from './url-state';

/** The comparison link token for these runs' specs. */
export function comparisonToken(
  runs: readonly { spec: RunSpec }[],
  catalog: CompareCatalog,
): string {
  return encodeComparison(
    runs.map(({ spec }) => ({
      algorithm: spec.algo,
      task: spec.env ?? spec.task ?? '',
      seed: spec.seed,
      config: spec.config,
      ...(spec.task !== undefined &&
      spec.sftSteps !== undefined &&
      spec.sftSteps !== catalog.sftSteps.default
        ? { sftSteps: spec.sftSteps }
        : {}),
      ...(spec.taskOptions
        ? { taskOptions: changedOptions(spec.task, spec.taskOptions, catalog) }
        : {}),
      // A user's own file cannot travel in a link (the share panel says so); shipped ones can.
      ...(spec.init?.kind === 'shipped' ? { init: spec.init } : {}),
      ...(spec.task !== undefined && spec.positions !== undefined
        ? { positions: spec.positions }
        : {}),
      ...(spec.curriculum !== undefined ? { curriculum: spec.curriculum } : {}),
      ...(spec.rewardModel !== undefined ? { rewardModel: spec.rewardModel } : {}),
      ...(spec.retained !== undefined ? { retained: changedRetained(spec.retained, catalog) } : {}),
    })),
    catalog,
  );
}

/** Only the task options that differ from the task's defaults (links stay short). */
function changedOptions(
  task: string | undefined,
  options: Settings,
  catalog: CompareCatalog,
): Settings {
  const defaults = catalog.tasks.find((t) => t.name === task)?.defaults ?? {};
  return Object.fromEntries(Object.entries(options).filter(([k, v]) => defaults[k] !== v));
}

/** A retained task with only its options that differ from the task's defaults (none: left out). */
function changedRetained(retained: RetainedTaskSpec, catalog: CompareCatalog): RetainedTaskSpec {
  const changed = changedOptions(retained.task, retained.taskOptions ?? {}, catalog);
  return Object.keys(changed).length > 0
    ? { task: retained.task, taskOptions: changed }
    : { task: retained.task };
}
