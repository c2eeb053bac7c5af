/**
 * A lab run to and from the shareable forms: the lab-run JSON file (src/compare/run-json.ts), its
 * metrics as CSV, and the comparison link (src/compare/url-state.ts; the token of a set of runs:
 * src/compare/comparison-token.ts). Pure functions of plain data, so the UI only wires buttons to
 * them.
 */
import { metricsToCsv } from '../compare/csv';
import { alignSeries, type CompareCatalog } from '../compare/run-record';
import { exportLabRun, parseLabRun, type ImportedRun } from '../compare/run-json';
import type { LinkedRun } from '../compare/url-state';
import { LAB_MODEL_SHAPE, type ModelShape } from '../models/transformer-config';
import {
  copyRetained,
  type RunCheckpoint,
  type RunEvent,
  type RunSpec,
  type Settings,
} from '../worker/run-protocol';
import type { Series, StoredRun } from './run-store';

/** What the shareable forms need of a run (a LabRun or a StoredRun). */
export type ShareableRun = Pick<StoredRun, 'label' | 'spec' | 'series' | 'events'>;

/**
 * The run as lab-run JSON: its spec, every metric per update, its events, and (language models)
 * its latest checkpoint when given, so that an import resumes from it instead of replaying.
 */
export function runToJson(
  run: ShareableRun,
  exportedAt?: string,
  checkpoint?: RunCheckpoint,
): string {
  const { spec } = run;
  return exportLabRun({
    algorithm: spec.algo,
    task: spec.env ?? spec.task ?? '',
    seed: spec.seed,
    config: spec.config,
    metrics: alignSeries(run.series),
    events: run.events,
    label: run.label,
    backend: spec.backend,
    ...(spec.task !== undefined && spec.sftSteps !== undefined ? { sftSteps: spec.sftSteps } : {}),
    ...(spec.task !== undefined && spec.reference !== undefined
      ? { reference: spec.reference }
      : {}),
    ...(spec.task !== undefined && spec.init !== undefined ? { init: spec.init } : {}),
    ...(spec.curriculum !== undefined ? { curriculum: spec.curriculum } : {}),
    ...(spec.rewardModel !== undefined ? { rewardModel: spec.rewardModel } : {}),
    ...(spec.retained !== undefined ? { retained: spec.retained } : {}),
    ...(spec.taskOptions ? { taskOptions: spec.taskOptions } : {}),
    ...(exportedAt ? { exportedAt } : {}),
    ...(checkpoint ? { checkpoint } : {}),
  });
}

/** The run's metrics as CSV (one row per update, one column per metric, sorted by name). */
export function runToCsv(run: Pick<ShareableRun, 'series'>): string {
  const metrics = alignSeries(run.series);
  return metricsToCsv(metrics, Object.keys(metrics).sort());
}

/** A run rebuilt from an imported file: its spec, and the data a stored run shows. */
export interface ImportedLabRun {
  spec: RunSpec;
  label: string;
  data: Pick<StoredRun, 'series' | 'events' | 'config' | 'steps'>;
  /** The checkpoint the file carried (at or before its last update). */
  checkpoint?: RunCheckpoint;
  /** What the reader should know before starting it here (e.g. a model the lab does not build). */
  note?: string;
}

/**
 * Reads a lab-run or CLI run file (throws an ImportError naming the JSON path of the first bad
 * value; nothing is changed by a refused file) into what RunManager.addStored takes.
 */
export function runFromJson(text: string, catalog: CompareCatalog): ImportedLabRun {
  const imported = parseLabRun(text, catalog);
  return {
    spec: specOf(imported, catalog),
    label: imported.label ?? `${imported.algorithm} on ${imported.task}, seed ${imported.seed}`,
    data: {
      series: seriesOf(imported.metrics),
      events: imported.events,
      config: configAfter(imported.config, imported.events),
      steps: Math.max(0, ...Object.values(imported.metrics).map((v) => v.length)),
    },
    ...(imported.checkpoint ? { checkpoint: imported.checkpoint } : {}),
    ...shapeNote(imported),
  };
}

/**
 * A CLI run of another model shape than the lab's, started from a fresh model: the lab would
 * replay it on its own shape, so the history would not be the file's. (A run started from a
 * file takes that file's shape, here as in the CLI.)
 */
function shapeNote(imported: ImportedRun): { note?: string } {
  const model = imported.cli?.model;
  if (!model || imported.init) return {};
  const lab = LAB_MODEL_SHAPE;
  if (model.width === lab.width && model.layers === lab.layers && model.heads === lab.heads) {
    return {};
  }
  const shape = (m: ModelShape) =>
    `width ${m.width}, ${m.layers} layer${m.layers === 1 ? '' : 's'}, ${m.heads} head${m.heads === 1 ? '' : 's'}`;
  return {
    note:
      `It trained a transformer of ${shape(model)}; the lab builds ${shape(lab)}. Starting it ` +
      'here replays its updates on the lab’s model, whose curves will differ from the file’s: ' +
      'compare it as it is.',
  };
}

function specOf(run: ImportedRun | LinkedRun, catalog: CompareCatalog): RunSpec {
  const lm = catalog.algorithms.find((a) => a.name === run.algorithm)?.family === 'lm';
  return {
    algo: run.algorithm,
    ...(lm
      ? {
          task: run.task,
          ...(run.taskOptions ? { taskOptions: run.taskOptions } : {}),
          sftSteps: run.sftSteps ?? catalog.sftSteps.default,
          ...('reference' in run && run.reference ? { reference: run.reference } : {}),
          ...(run.init ? { init: run.init } : {}),
          ...(run.curriculum ? { curriculum: { ...run.curriculum } } : {}),
          ...(run.rewardModel ? { rewardModel: { ...run.rewardModel } } : {}),
          ...(run.retained ? { retained: copyRetained(run.retained) } : {}),
        }
      : { env: run.task }),
    seed: run.seed,
    config: run.config,
    backend: ('backend' in run ? run.backend : undefined) ?? 'auto',
  };
}

/** Per-update values (NaN: not reported) as the lab's sparse series. */
function seriesOf(metrics: Record<string, number[]>): Record<string, Series> {
  const out: Record<string, Series> = {};
  for (const [name, values] of Object.entries(metrics)) {
    const s: Series = { x: [], y: [] };
    values.forEach((v, i) => {
      if (!Number.isNaN(v)) {
        s.x.push(i + 1);
        s.y.push(v);
      }
    });
    out[name] = s;
  }
  return out;
}

function configAfter(config: Settings, events: readonly RunEvent[]): Settings {
  let out = { ...config };
  for (const e of events) if (e.kind === 'hyperparams') out = { ...out, ...e.changes };
  return out;
}

/** The run specs of a comparison link, to create again. */
export function specsFromLink(runs: readonly LinkedRun[], catalog: CompareCatalog): RunSpec[] {
  return runs.map((run) => specOf(run, catalog));
}
