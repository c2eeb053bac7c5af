/**
 * Frame statistics from what the page recorded (bench/ui/recorder.ts): requestAnimationFrame
 * timestamps, phase marks and long tasks. Pure: no I/O, no browser.
 */
import type { FrameStats } from '../core/types';

/** The suite's name (`--suites=ui-frames`; scripts/bench.mjs knows it too). */
export const UI_SUITE = 'ui-frames';

/** One 60 Hz frame, the budget: p95 frame time ≤ 16.7 ms. */
export const FRAME_BUDGET_MS = 16.7;
/** The vsync period headless Chromium draws at (60 Hz). */
export const VSYNC_MS = 1000 / 60;

/** The longest main-thread task a switch of x-axis or smoothing of a 100k-point run may take. */
export const SWITCH_TASK_MS = 50;
/** The switch scenario's row, which carries its longest task (renderUiTarget reads it). */
export const SWITCH_ROW = '100k: switch x-axis and smoothing';
/** The baseline row (the lab page with no runs); the target line quotes its p95. */
export const IDLE_ROW = 'lab page idle';

/** Frame periods an interval spans (1: on time; 2: one vsync without a new frame). */
export const vsyncsOf = (ms: number): number => Math.max(1, Math.round(ms / VSYNC_MS));

/** What the in-page recorder hands back when stopped. */
export interface FrameRecording {
  /** rAF callback timestamps (ms, performance.now() clock), ascending. */
  times: number[];
  /** Phase boundaries the driver marked: from `at` on, intervals belong to `name`. */
  marks: { name: string; at: number }[];
  /** Long tasks seen: start time and duration (ms); null when the browser has no 'longtask'. */
  longTasks: { start: number; duration: number }[] | null;
  /** performance.now() when recording started and stopped. */
  startedAt: number;
  stoppedAt: number;
}

/** The nearest-rank q-quantile of ascending `sorted` (q in (0, 1]); NaN when empty. */
export function nearestRank(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** Milliseconds to 0.01 ms: finer than rAF timestamps resolve, and a readable JSON. */
export const round2 = (v: number): number => Math.round(v * 100) / 100;

/** Intervals between consecutive timestamps, each with the time it ended. */
export function intervalsOf(times: readonly number[]): { ms: number; end: number }[] {
  const out: { ms: number; end: number }[] = [];
  for (let i = 1; i < times.length; i++)
    out.push({ ms: times[i]! - times[i - 1]!, end: times[i]! });
  return out;
}

/**
 * Statistics of `intervals` over a window of `windowMs`, with the long tasks that started in it.
 * `longTasks` null: the browser could not observe them (reported as null, not as zero).
 */
export function frameStats(
  intervals: readonly number[],
  windowMs: number,
  longTasks: readonly { duration: number }[] | null,
  details: Record<string, number> = {},
): FrameStats {
  const sorted = [...intervals].sort((a, b) => a - b);
  return {
    intervals: sorted.length,
    windowMs: round2(windowMs),
    p50: round2(nearestRank(sorted, 0.5)),
    p95: round2(nearestRank(sorted, 0.95)),
    p99: round2(nearestRank(sorted, 0.99)),
    max: round2(sorted.length > 0 ? sorted[sorted.length - 1]! : NaN),
    over16_7: sorted.filter((ms) => ms > FRAME_BUDGET_MS).length,
    over33_4: sorted.filter((ms) => ms > 2 * FRAME_BUDGET_MS).length,
    droppedFrames: sorted.reduce((sum, ms) => sum + vsyncsOf(ms) - 1, 0),
    longTasks: longTasks && {
      count: longTasks.length,
      totalMs: round2(longTasks.reduce((sum, t) => sum + t.duration, 0)),
      maxMs: round2(longTasks.reduce((max, t) => Math.max(max, t.duration), 0)),
    },
    details,
  };
}

/**
 * Statistics of the intervals that end in [from, to) and of the long tasks that start there, with
 * the intervals themselves (ms, in order). An interval belongs to the window it ends in: a stall
 * an action causes ends after the action's mark.
 */
export function windowStats(
  rec: FrameRecording,
  from = -Infinity,
  to = Infinity,
  details: Record<string, number> = {},
): { stats: FrameStats; samples: number[] } {
  const samples = intervalsOf(rec.times)
    .filter((i) => i.end >= from && i.end < to)
    .map((i) => i.ms);
  const tasks = rec.longTasks && rec.longTasks.filter((t) => t.start >= from && t.start < to);
  const windowMs = Math.min(to, rec.stoppedAt) - Math.max(from, rec.startedAt);
  return { stats: frameStats(samples, windowMs, tasks, details), samples };
}

/** The recording's phases in mark order: each from its mark to the next (the last: to the end). */
export function phases(rec: FrameRecording): { name: string; from: number; to: number }[] {
  return rec.marks.map((mark, k) => ({
    name: mark.name,
    from: mark.at,
    to: rec.marks[k + 1]?.at ?? Infinity,
  }));
}
