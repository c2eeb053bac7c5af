/**
 * Validate, then time: the one loop every implementation goes through (llm.c's dev/cuda habit).
 * A first launch warms up (pipelines compile, data uploads) and its result is checked against the
 * CPU reference; an implementation that fails the check is reported as failed and never timed.
 * Then more launches until WARM_UP_MS have passed, so a GPU is up to speed before the timed
 * launches (one launch was not enough on an NVIDIA H200: see WARM_UP_MS).
 */
import type { BenchContext, Measurement } from './types';
import { median } from './stats';

/** One prepared implementation on one shape, with its inputs already in place. */
export interface Runner<R> {
  /** One launch, until the result is on the CPU. */
  run(): Promise<R>;
  /** GPU time of one launch from timestamp queries, where the runner can measure it. */
  gpuTime?(): Promise<number | undefined>;
  dispose(): void | Promise<void>;
}

export interface RepPolicy {
  /** At most this many timed repetitions... */
  max: number;
  /** ...and no more once the timed repetitions have taken this long (at least one always runs). */
  budgetMs: number;
}

export interface MeasureSpec<R> {
  impl: string;
  shape: Record<string, number>;
  bytes: number;
  reps: RepPolicy;
  prepare(): Promise<Runner<R>>;
  /** Largest |result − reference|. */
  error(result: R): number;
  tolerance: number;
  log(line: string): void;
}

/**
 * Untimed launches after the validated one, by time (a slow CPU implementation, whose first launch
 * already took longer, gets none). A GPU that has idled runs slower (presumably at lower clocks)
 * until it has been busy a while, and the bench idles before every shape (settle()): on an NVIDIA
 * H200 the copy kernel took 0.76 ms of GPU time after 5 s idle and 0.29 ms once busy
 * (bench/offline/gpu-state-probe.mjs), and 200 ms of launches with readbacks between them were
 * not enough (the log-probs kernel read 56% of the copy then, 90% after 1 s).
 */
export const WARM_UP_MS = 1000;

export async function measure<R>(spec: MeasureSpec<R>): Promise<Measurement> {
  const base = { impl: spec.impl, shape: spec.shape, bytes: spec.bytes };
  const where = `${spec.impl} ${Object.values(spec.shape).join('×')}`;
  let runner: Runner<R> | undefined;
  try {
    runner = await spec.prepare();
    const warmUpStart = performance.now();
    const maxAbsErr = spec.error(await runner.run());
    if (!(maxAbsErr <= spec.tolerance)) {
      const reason = `validation failed: max |err| ${maxAbsErr.toExponential(2)} > ${spec.tolerance}`;
      spec.log(`${where}: ${reason}`);
      return { ...base, status: 'failed', reason, maxAbsErr };
    }
    while (performance.now() - warmUpStart < WARM_UP_MS) await runner.run();
    const samples: number[] = [];
    let spent = 0;
    while (samples.length < spec.reps.max && (samples.length === 0 || spent < spec.reps.budgetMs)) {
      const start = performance.now();
      await runner.run();
      const ms = performance.now() - start;
      samples.push(ms);
      spent += ms;
    }
    const gpuMs = runner.gpuTime
      ? await medianGpuTime(runner.gpuTime.bind(runner), samples)
      : undefined;
    const ms = median(samples);
    spec.log(
      `${where}: ${ms.toFixed(1)} ms (${samples.length} rep${samples.length > 1 ? 's' : ''})`,
    );
    return { ...base, status: 'ok', ms, samples, maxAbsErr, ...(gpuMs ? { gpuMs } : {}) };
  } catch (error) {
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    spec.log(`${where}: failed: ${reason}`);
    return { ...base, status: 'failed', reason };
  } finally {
    await runner?.dispose();
  }
}

/** Median GPU time over as many launches as the wall-clock loop ran (at most 3). */
async function medianGpuTime(
  gpuTime: () => Promise<number | undefined>,
  samples: number[],
): Promise<number | undefined> {
  const times: number[] = [];
  for (let i = 0; i < Math.min(3, samples.length); i++) {
    const t = await gpuTime();
    if (t === undefined) return undefined;
    times.push(t);
  }
  return times.length > 0 ? median(times) : undefined;
}

/** A skipped implementation (e.g. a shape too slow for it on this adapter). */
export function skipped(
  impl: string,
  shape: Record<string, number>,
  bytes: number,
  reason: string,
): Measurement {
  return { impl, shape, bytes, status: 'skipped', reason };
}

/** Times one call of a synchronous CPU function (no warm-up: used for the reference itself). */
export function timeOnce<T>(fn: () => T): { value: T; ms: number } {
  const start = performance.now();
  const value = fn();
  return { value, ms: performance.now() - start };
}

/** Waits for the environment to go idle before a shape's timings; says so when it took a while. */
export async function settleQuietly(ctx: BenchContext): Promise<void> {
  const { waitedMs, quiet, lastCores } = await ctx.settle();
  if (!quiet)
    ctx.log(
      `still ${lastCores.toFixed(2)} cores busy after ${(waitedMs / 1000).toFixed(0)} s; timing anyway`,
    );
  else if (waitedMs > 3000)
    ctx.log(`waited ${(waitedMs / 1000).toFixed(0)} s for the environment to go idle`);
}
