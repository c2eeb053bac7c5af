/**
 * The data every benchmark produces. Results cross from the browser page to Node as JSON, so
 * everything here is plain data.
 */
import type { AdapterSummary } from '../../src/gpu/adapter-summary';
import type { GpuContext } from '../../src/gpu/context';
import type { OrtModule, OrtLogTap } from '../peers/ort';
import type { TfjsModules } from '../peers/tfjs';

export type EnvName = 'node-dawn' | 'chromium';

export interface EnvInfo {
  name: EnvName;
  /** Our device (requested with the adapter's limits). */
  adapter: AdapterSummary;
  /** A software (fallback) adapter: results rank kernels, they are not GPU numbers. */
  software: boolean;
  /** navigator.userAgent in the browser, `node vX` in Node. */
  runtime: string;
  /** Facts about this environment that affect the numbers (threads, shims, load). */
  notes: string[];
}

export type MeasurementStatus = 'ok' | 'failed' | 'skipped';

export interface Measurement {
  impl: string;
  /** Shape of the work, e.g. { N: 512, V: 32768 }. */
  shape: Record<string, number>;
  status: MeasurementStatus;
  /** Why it failed or was skipped. */
  reason?: string;
  /** Median of the timed repetitions. */
  ms?: number;
  /** Every timed repetition, in order. */
  samples?: number[];
  /** GPU time of the same work from timestamp queries (median), where measured. */
  gpuMs?: number;
  /** Bytes counted for the effective bandwidth (bytes / ms). */
  bytes: number;
  /** Largest |result − CPU reference| of the validation run. */
  maxAbsErr?: number;
}

export interface SuiteResult {
  suite: string;
  title: string;
  /** What is timed how, and how the bytes are counted. */
  notes: string[];
  /** The impl every ratio is taken against (ratio = impl ms / baseline ms). */
  baseline: string;
  /** The impl whose GB/s is this device's ceiling, if the suite measures one. */
  ceiling?: string;
  measurements: Measurement[];
}

export interface EnvResult {
  env: EnvInfo;
  suites: SuiteResult[];
  seconds: number;
}

export interface BenchOptions {
  /** Fewer and smaller shapes: a smoke run of every implementation. */
  quick: boolean;
  /** Run only these suites (by name); all when empty. */
  suites: string[];
}

/** Everything a suite gets from its environment. */
export interface BenchContext {
  env: EnvInfo;
  gpu: GpuContext;
  options: BenchOptions;
  log(line: string): void;
  /** tfjs with the WebGPU backend ready (imported on first use). */
  tfjs(): Promise<TfjsModules>;
  /** onnxruntime-web (WebGPU build) with its wasm paths and threads set. */
  ort(): Promise<OrtModule>;
  /** Collects what ORT's native logger prints while `fn` runs (for node placement checks). */
  ortLogTap: OrtLogTap;
  /**
   * Waits (up to a limit) until this environment's own processes are idle: V8 compiles ORT's
   * 28 MB wasm in background threads for about a minute after it loads, which would otherwise
   * slow every measurement taken meanwhile on a 2-core machine.
   */
  settle(): Promise<SettleResult>;
}

export interface SettleResult {
  waitedMs: number;
  /** False when the limit ran out first (other load on the machine, or endless work). */
  quiet: boolean;
  /** CPU use of the environment's processes in the last window, in cores. */
  lastCores: number;
}

/** One benchmark: adding an op bench means one module exporting one of these. */
export interface BenchSuite {
  name: string;
  run(ctx: BenchContext): Promise<SuiteResult>;
}
