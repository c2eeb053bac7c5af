/**
 * A run as a file: what the CLI writes and the lab imports — the config, every metric as a series
 * (one value per update, NaN where an update did not report it), the events, and a summary; a
 * language-model run adds its task options, curriculum, reward-model settings or retained task, and where it started
 * (its warm-up's SFT steps, or the file it started from). JSON, versioned
 * (the optional fields came later within version 1: a file without them is a run without them);
 * parsing validates it and never evaluates anything in it.
 */
import type { ModelShape } from '../models/transformer-config';
import type { CurriculumConfig } from './curriculum';
import type { RewardModelConfig } from './reward-model';
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
  /** Language models without a curriculum: the task options set (defaults fill the rest). */
  taskOptions?: Record<string, number | boolean | string>;
  /** Language models: the run trained through its task's rungs, moving up so. */
  curriculum?: CurriculumConfig;
  /** Language models: before RL the run trained a learned reward model with these settings. */
  rewardModel?: RewardModelConfig;
  /** Language models: the second task the run kept (ptx, retained/success_rate). */
  retained?: { task: string; taskOptions?: Record<string, number | boolean | string> };
  /** Language models started from a fresh initialization: the supervised warm-up's steps. */
  sftSteps?: number;
  /** Language models started from a file (`--init`): its name, and its bytes as base64. */
  init?: { file: string; bytes: string };
  /** Language models: the transformer's trunk (the lab builds only LAB_MODEL_SHAPE). */
  model?: ModelShape;
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
