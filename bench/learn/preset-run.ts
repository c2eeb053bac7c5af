/**
 * One lesson preset trained through the lab's own run host in Node (shipped start, warm-up and
 * reward model as the lab builds them), for the learning benchmarks that time or follow lesson
 * runs: the metric series it produced, the run's backend line, and how long set-up and the whole
 * run took.
 */
import { readFileSync } from 'node:fs';
import { buildPresetSpec, PRESETS, type PresetName } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import { createRunHost } from '../../src/worker/run-host';
import type { MetricPoint, RunSpec, Settings } from '../../src/worker/run-protocol';

const MODELS_DIR = new URL('../../public/models/', import.meta.url);

export interface PresetRunOptions {
  backend: 'cpu' | 'webgpu';
  /** The metrics whose series are collected, one value per update. */
  metrics: readonly string[];
  /** Updates at most. */
  budget: number;
  /** Replaces the preset's seed. */
  seed?: number;
  /** Settings changed on top of the preset's (a control's lr ≈ 0, a mechanism switched off). */
  change?: Settings;
  /** Task options changed on top of the preset's (a control that takes the tool away). */
  taskOptions?: Settings;
  /** Replaces the preset's shipped start (a model name of the shipped manifest). */
  shipped?: string;
  /** Ends the run early once it holds for the series so far (checked after every update). */
  stop?: (series: Record<string, number[]>) => boolean;
  /** Ends the run once this many seconds have passed since it was asked for. */
  maxSeconds?: number;
}

export interface PresetRun {
  series: Record<string, number[]>;
  /** Every metric of every update, in the order the run reported them. */
  points: MetricPoint[];
  updates: number;
  /** True when `stop` ended the run. */
  stopped: boolean;
  /** The run's own backend line (adapter or CPU, and why). */
  backendLine: string;
  /** From asking for the run until it was ready to train. */
  setupSeconds: number;
  /** From asking for the run until its last update. */
  seconds: number;
  /**
   * CPU time this process spent over the same span (user + system, all threads): on a machine
   * shared with other work, what the run would take alone, where `seconds` counts the waiting.
   */
  cpuSeconds: number;
}

export async function runPreset(name: PresetName, options: PresetRunOptions): Promise<PresetRun> {
  const built = buildPresetSpec(name, ALGORITHMS[PRESETS[name].algo]!.defaults);
  const spec = {
    ...built,
    config: { ...built.config, ...options.change },
    seed: options.seed ?? built.seed,
    backend: options.backend,
    ...(options.shipped ? { init: { kind: 'shipped' as const, model: options.shipped } } : {}),
    ...(options.taskOptions
      ? { taskOptions: { ...built.taskOptions, ...options.taskOptions } }
      : {}),
  };
  return runSpec(spec, options);
}

/** Any run spec (a preset's, or the lab form's defaults), stepped as runPreset describes. */
export async function runSpec(
  spec: RunSpec,
  options: Omit<PresetRunOptions, 'change' | 'taskOptions' | 'shipped' | 'seed'>,
): Promise<PresetRun> {
  const series: Record<string, number[]> = Object.fromEntries(options.metrics.map((m) => [m, []]));
  const points: MetricPoint[] = [];
  let backendLine = '(no backend message)';
  const elapsed = (since: number) => (performance.now() - since) / 1000;
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const host = createRunHost({
    flushMs: 1,
    lm: { readShipped: async (file) => new Uint8Array(readFileSync(new URL(file, MODELS_DIR))) },
  });
  await host.createRun(spec, (m) => {
    if (m.type === 'backend') backendLine = m.line;
    if (m.type !== 'update') return;
    points.push(...m.points);
    for (const p of m.points)
      for (const metric of options.metrics) series[metric]!.push(p.metrics[metric]!);
  });
  const setupSeconds = elapsed(started);
  let updates = 0;
  let stopped = false;
  while (updates < options.budget) {
    await host.step();
    updates += 1;
    if (options.stop?.(series)) {
      stopped = true;
      break;
    }
    if (options.maxSeconds !== undefined && elapsed(started) > options.maxSeconds) break;
  }
  const seconds = elapsed(started);
  const cpu = process.cpuUsage(cpuStarted);
  await host.dispose();
  return {
    series,
    points,
    updates,
    stopped,
    backendLine,
    setupSeconds,
    seconds,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}
