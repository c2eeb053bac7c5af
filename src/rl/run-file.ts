/**
 * A run as a file: what the CLI writes and the lab imports — the config, every metric as a series
 * (one value per update, NaN where an update did not report it), the events, and a summary. JSON,
 * versioned; parsing validates it and never evaluates anything in it.
 */
import type { Metrics, RunEvent } from './trainer';

export const RUN_FILE_FORMAT = 'agent-rl-lab/run';
export const RUN_FILE_VERSION = 1;

export interface RunFile {
  format: typeof RUN_FILE_FORMAT;
  version: typeof RUN_FILE_VERSION;
  algorithm: string;
  task: string;
  seed: number;
  backend: string;
  createdAt: string;
  config: Record<string, number | boolean | string>;
  /** Metric name → one value per update (update i at index i − 1). */
  metrics: Record<string, number[]>;
  events: RunEvent[];
  summary: Record<string, number | string>;
}

/** Accumulates per-update metrics into aligned series. */
export class MetricSeries {
  readonly series: Record<string, number[]> = {};
  private updates = 0;

  push(metrics: Metrics): void {
    for (const [name, value] of Object.entries(metrics)) {
      const values = (this.series[name] ??= new Array<number>(this.updates).fill(NaN));
      values.push(value);
    }
    this.updates += 1;
    for (const values of Object.values(this.series)) {
      while (values.length < this.updates) values.push(NaN);
    }
  }

  get length(): number {
    return this.updates;
  }
}

/** JSON with NaN and ±Infinity kept as strings ("NaN"), so a series survives the round trip. */
export function serializeRunFile(run: RunFile): string {
  return JSON.stringify(
    run,
    (_, value: unknown) =>
      typeof value === 'number' && !Number.isFinite(value) ? String(value) : value,
    1,
  );
}
