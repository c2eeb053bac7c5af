/**
 * The data every benchmark produces. Results cross from the browser page to Node as JSON, so
 * everything here is plain data.
 */
import type { AdapterSummary } from '../../src/gpu/adapter-summary';
import type { GpuContext } from '../../src/gpu/context';
import type { OrtModule, OrtLogTap } from '../peers/ort';
import type { TfjsModules } from '../peers/tfjs';

/**
 * 'chromium-ui': the lab page itself in headless Chromium, timed by its frames (bench/ui/).
 * 'chromium-lessons': the lesson pages, timed by how long each widget's run takes to pass its check.
 */
export type EnvName = 'node-dawn' | 'chromium' | 'chromium-ui' | 'chromium-lessons';

export interface EnvInfo {
  name: EnvName;
  /**
   * Our device (requested with the adapter's limits). Absent for 'chromium-ui' (its page requests
   * no device of ours: the runs there train on the CPU, the charts are SVG) and for
   * 'chromium-lessons' (each run's worker requests its own; the rows carry the line it showed).
   */
  adapter?: AdapterSummary;
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
  /** UI scenarios (bench/ui/): the frame statistics; `samples` then holds every frame interval. */
  frames?: FrameStats;
  /** Lesson times (bench/ui/lesson-times.ts): what the row times; `ms` is its `seconds` × 1000. */
  lesson?: LessonTiming;
}

/**
 * How long a reader waits for a lesson's experiments: one widget, one lesson (the sum of its
 * widgets) or a sum over lessons, on one backend. Sums count passed widgets only; `passed` below
 * `widgets` or `widgets` below `ofWidgets` says the sum is short.
 */
export interface LessonTiming {
  kind: 'widget' | 'lesson' | 'total';
  /** The backend asked for: CPU (no WebGPU adapter, `?backend=cpu`) or WebGPU. */
  backend: 'cpu' | 'webgpu';
  /** The lesson's id; for a total, what it covers ('all lessons', 'route to a tool-using agent'). */
  lesson: string;
  /** Reading time the lesson states, minutes (a total: the sum over every lesson it covers). */
  statedMinutes: number;
  /** Seconds from clicking Start to the check showing passed (sums: over passed widgets). */
  seconds?: number;
  /** Seconds from "Open the run" to the run being ready to start (worker, checkpoint, device). */
  openSeconds?: number;
  /** Widgets run, widgets passed, and widgets there are (the lesson has, or the total covers). */
  widgets: number;
  passed: number;
  ofWidgets: number;
  /** Widget rows: its place in the lesson (from 1), preset, check and updates shown at the end. */
  index?: number;
  preset?: string;
  check?: string;
  updates?: number;
  /** The page's backend line (its footer) and the run's own line (as the lab shows it). */
  pageBackend?: string;
  runBackend?: string;
  /** Lesson rows: the page shows the lesson done. Totals: lessons counted and lessons covered. */
  done?: boolean;
  lessons?: number;
  ofLessons?: number;
}

/**
 * Frame intervals of a page over a window: the time between consecutive requestAnimationFrame
 * callbacks, in ms. Percentiles are nearest-rank (p95 = the ⌈0.95·n⌉-th smallest interval).
 */
export interface FrameStats {
  /** Intervals measured (rAF callbacks − 1). */
  intervals: number;
  /** Length of the window, ms. */
  windowMs: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /**
   * Intervals over 16.7 and over 33.4 ms. rAF timestamps sit on the 60 Hz vsync grid (multiples
   * of 16.67 ms, ±0.2 ms jitter), so an on-time 16.75 ms frame counts in the first and a frame
   * one vsync late (33.3 ms) may miss the second: read them with `droppedFrames`.
   */
  over16_7: number;
  over33_4: number;
  /** Vsyncs without a new frame: Σ max(0, round(interval / 16.67 ms) − 1). */
  droppedFrames: number;
  /** Main-thread tasks over 50 ms (PerformanceObserver 'longtask'); null where unsupported. */
  longTasks: { count: number; totalMs: number; maxMs: number } | null;
  /** What else the scenario measured, e.g. { importToChartMs: 812, pointsPerSeries: 100000 }. */
  details: Record<string, number>;
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
  /** The lab's `?backend=` in the UI frame bench (`--ui-backend=webgpu`); 'cpu' when absent. */
  uiBackend?: 'cpu' | 'webgpu';
  /** `--ui-profile=FILE`: a main-thread CPU profile of the four-runs window (.cpuprofile). */
  uiProfile?: string;
  /** `--ui-scenarios=switch,100k`: only these UI scenarios (idle, four-runs, 100k, switch). */
  uiScenarios?: string[];
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
  /** True when the suite times tfjs or onnxruntime-web: they are loaded (and waited for) only then. */
  usesPeers?: boolean;
  run(ctx: BenchContext): Promise<SuiteResult>;
}
