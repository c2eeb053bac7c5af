/**
 * The one shape every compare helper reads: a run as plain data — what it was built from and one
 * value per update of each metric. The lab's runs, an imported lab-run file and the CLI's run file
 * all become this (run-file.ts parses files into it; alignSeries() turns the lab's live series
 * into it), so the charts, the seed bands, the final table and the exports share one input.
 *
 * Algorithm metadata (config specs, defaults, tasks) comes in as a CompareCatalog — the RunCatalog
 * the lab worker already sends the UI — so these modules stay pure data and the UI never has to
 * import src/rl/ (docs/architecture.md: the UI talks to workers only).
 */
import type { AlgorithmInfo, RunCatalog, RunEvent, Settings } from '../worker/run-protocol';

export type { AlgorithmInfo, RunEvent, Settings };

export interface RunRecord {
  /** A key of the registry's ALGORITHMS, e.g. 'grpo', 'q-learning'. */
  algorithm: string;
  /** The environment (env algorithms, e.g. 'cliffwalking') or token task (e.g. 'reverse'). */
  task: string;
  /** Non-negative integer seed. */
  seed: number;
  /** Every setting the run was created with; later live changes are 'hyperparams' events. */
  config: Settings;
  /**
   * Metric name → one value per update: index i holds update i + 1, NaN where that update did not
   * report the metric. All series of a run have the same length (MetricSeries pads them).
   */
  metrics: Record<string, number[]>;
  events: RunEvent[];
}

/** What the compare helpers need of the catalog: specs, defaults, tasks, the warm-up range. */
export type CompareCatalog = Pick<RunCatalog, 'algorithms' | 'tasks' | 'sftSteps'>;

export function findAlgorithm(catalog: CompareCatalog, name: string): AlgorithmInfo | undefined {
  return catalog.algorithms.find((a) => a.name === name);
}

/** The tasks an algorithm accepts: its environments, or every token task for language models. */
export function tasksFor(catalog: CompareCatalog, algo: AlgorithmInfo): string[] {
  return algo.family === 'env' ? [...algo.envs] : catalog.tasks.map((t) => t.name);
}

/** Updates the run has metrics for (the length of its longest series). */
export function updateCount(run: Pick<RunRecord, 'metrics'>): number {
  let n = 0;
  for (const values of Object.values(run.metrics)) n = Math.max(n, values.length);
  return n;
}

/**
 * The config in force during update `update` (1-based): the initial config with every
 * 'hyperparams' event of step ≤ update applied (RunControl records a change at the step of the
 * update it first applies to).
 */
export function configAt(run: Pick<RunRecord, 'config' | 'events'>, update: number): Settings {
  let config = run.config;
  for (const event of run.events) {
    if (event.kind === 'hyperparams' && event.step <= update) {
      config = { ...config, ...event.changes };
    }
  }
  return config;
}

/**
 * The lab's live series ({ x: update numbers, y: values } per metric, only updates that reported
 * the metric) as aligned per-update arrays: y lands at index x − 1, NaN elsewhere. A series the
 * lab has thinned (halveSeries keeps every other update once it passes MAX_POINTS) comes out with
 * NaN between the kept updates, so cumulative x-axes stop at the first gap rather than
 * under-count (see x-axis.ts).
 */
export function alignSeries(
  series: Readonly<
    Record<string, { readonly x: readonly number[]; readonly y: readonly number[] }>
  >,
): Record<string, number[]> {
  let length = 0;
  for (const { x } of Object.values(series)) {
    for (const step of x) if (Number.isInteger(step) && step > length) length = step;
  }
  const out: Record<string, number[]> = {};
  for (const [name, { x, y }] of Object.entries(series)) {
    const values = new Array<number>(length).fill(NaN);
    for (let i = 0; i < x.length; i++) {
      const step = x[i]!;
      if (Number.isInteger(step) && step >= 1) values[step - 1] = y[i] ?? NaN;
    }
    out[name] = values;
  }
  return out;
}

/** A task's options as checkable settings (expectSettings reads an AlgorithmInfo-shaped spec). */
export function taskOptionsSpec(catalog: CompareCatalog, task: string): AlgorithmInfo | undefined {
  const info = catalog.tasks.find((t) => t.name === task);
  if (!info) return undefined;
  return {
    name: info.name,
    family: 'lm',
    doc: info.doc,
    spec: info.spec,
    defaults: info.defaults,
    envs: [],
    exportsOnnx: false,
    checkpoints: false,
    reference: null,
    curriculum: false,
    rewardModel: false,
    retained: false,
  };
}
