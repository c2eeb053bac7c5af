/**
 * The final-metrics table under the charts: per run, the mean of the last k values of each
 * metric and the settings that differ between the runs (with any live changes), plus the row
 * order when the reader sorts a column.
 */
import {
  configDiff,
  DEFAULT_FINAL_WINDOW,
  finalValue,
  type FinalValue,
} from '../../compare/final-table';
import { configAt, type CompareCatalog } from '../../compare/run-record';
import type { Settings } from '../../worker/run-protocol';
import { own } from '../../util/own';
import { runRecord, type RunView } from './run-view';

/** A setting's value as the table shows it ('—' when the run's algorithm has no such key). */
export function settingText(value: Settings[string] | undefined): string {
  return value === undefined ? '—' : String(value);
}

export interface FinalRow {
  id: string;
  label: string;
  color: string;
  dash: string;
  seed: number;
  /** Per metric (same order as the table's metrics): mean of the last k finite values. */
  finals: FinalValue[];
  /** Per differing setting: the value in force at the end, and its live changes if any. */
  settings: { text: string; changed?: string }[];
}

export interface FinalTableModel {
  metrics: string[];
  /** Settings whose value is not the same in every run, in the algorithms' declared order. */
  diffKeys: string[];
  rows: FinalRow[];
  /** k: "final" is the mean of the last k reported values. */
  window: number;
}

/**
 * One row per run: the final value of each metric, and the settings that differ between the runs
 * (configDiff over the config each run ended with — created-with config plus live changes — plus
 * any key a run changed live, since a run whose learning rate moved mid-way differs from one
 * left alone even when both end at the same value).
 */
export function finalTableModel(
  runs: readonly (RunView & { dash: string })[],
  metrics: readonly string[],
  catalog: CompareCatalog | undefined,
  k = DEFAULT_FINAL_WINDOW,
): FinalTableModel {
  const records = runs.map((run) => runRecord(run));
  const ended = records.map((r) => ({ algorithm: r.algorithm, config: configAt(r, Infinity) }));
  const changedKeys = new Set<string>();
  for (const r of records) {
    for (const e of r.events)
      if (e.kind === 'hyperparams') Object.keys(e.changes).forEach((key) => changedKeys.add(key));
  }
  const differing = configDiff(
    ended,
    catalog ?? { algorithms: [], tasks: [], sftSteps: EMPTY_SFT },
  );
  const diffKeys = [...differing, ...[...changedKeys].filter((key) => !differing.includes(key))];
  const rows = runs.map((run, i): FinalRow => ({
    id: run.id,
    label: run.label,
    color: run.color,
    dash: run.dash,
    seed: run.spec.seed,
    finals: metrics.map((m) => finalValue(own(run.series, m)?.y ?? [], k)),
    settings: diffKeys.map((key) => {
      const text = settingText(ended[i]!.config[key]);
      const steps = records[i]!.events.flatMap((e) =>
        e.kind === 'hyperparams' && Object.hasOwn(e.changes, key) ? [e.step] : [],
      );
      if (steps.length === 0) return { text };
      const was = settingText(records[i]!.config[key]);
      const at = steps.length === 1 ? `update ${steps[0]}` : `updates ${steps.join(', ')}`;
      return { text, changed: `changed live at ${at} (was ${was})` };
    }),
  }));
  return { metrics: [...metrics], diffKeys, rows, window: k };
}

const EMPTY_SFT = { default: 0, min: 0, max: 0, doc: '' };

/**
 * Row order for a table column: ascending or descending by `keys` (numbers numerically, text with
 * numbers in it compared as numbers, so "#10" sorts after "#9"); rows without a value (NaN,
 * undefined) always last; equal keys keep their order.
 */
export function sortedRowOrder(
  keys: readonly (number | string | undefined)[],
  descending: boolean,
): number[] {
  const missing = (v: number | string | undefined) =>
    v === undefined || (typeof v === 'number' && !Number.isFinite(v));
  const sign = descending ? -1 : 1;
  return keys
    .map((key, index) => ({ key, index }))
    .sort((a, b) => {
      const ma = missing(a.key);
      const mb = missing(b.key);
      if (ma || mb) return ma === mb ? a.index - b.index : ma ? 1 : -1;
      const c =
        typeof a.key === 'number' && typeof b.key === 'number'
          ? a.key - b.key
          : String(a.key).localeCompare(String(b.key), 'en', { numeric: true });
      return c === 0 ? a.index - b.index : sign * c;
    })
    .map((r) => r.index);
}
