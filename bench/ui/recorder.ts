/**
 * The in-page half of the frame bench: functions handed to Playwright's page.evaluate(), which
 * sends their source to the page. They must stay self-contained — no imports, no closures over
 * module values — because only their text reaches the page.
 *
 * The recorder keeps every requestAnimationFrame timestamp (the frame's start time, as the
 * callback receives it) and, where Chromium supports it, every long task (> 50 ms on the main
 * thread). The driver marks phases by name while it interacts; it never polls the page during a
 * window, so the only extra main-thread work is the rAF callback itself (one push per frame).
 */
import type { FrameRecording } from './frame-stats';

interface Recorder extends FrameRecording {
  running: boolean;
  observer: PerformanceObserver | undefined;
}

declare global {
  interface Window {
    __benchFrames?: Recorder;
    /** performance.now() when the import's file input fired 'change' (bench/ui/frames.ts). */
    __benchImportAt?: number;
  }
}

/** Starts recording (replacing a recorder left from before). */
export function startRecorder(): void {
  const old = window.__benchFrames;
  if (old) {
    old.running = false;
    old.observer?.disconnect();
  }
  const supported = PerformanceObserver.supportedEntryTypes?.includes('longtask') ?? false;
  const rec: Recorder = {
    times: [],
    marks: [],
    longTasks: supported ? [] : null,
    startedAt: performance.now(),
    stoppedAt: NaN,
    running: true,
    observer: undefined,
  };
  if (supported) {
    rec.observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        rec.longTasks?.push({ start: e.startTime, duration: e.duration });
      }
    });
    rec.observer.observe({ type: 'longtask' });
  }
  const tick = (t: number) => {
    if (!rec.running) return;
    rec.times.push(t);
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__benchFrames = rec;
}

/** From now on, frames belong to phase `name`. */
export function markPhase(name: string): void {
  window.__benchFrames?.marks.push({ name, at: performance.now() });
}

/** Stops recording and returns what was recorded (plain data). */
export function stopRecorder(): FrameRecording {
  const rec = window.__benchFrames;
  if (!rec) throw new Error('no frame recorder is running');
  rec.running = false;
  rec.stoppedAt = performance.now();
  // Entries observed but not yet delivered to the callback.
  for (const e of rec.observer?.takeRecords() ?? []) {
    rec.longTasks?.push({ start: e.startTime, duration: e.duration });
  }
  rec.observer?.disconnect();
  window.__benchFrames = undefined;
  return {
    times: rec.times,
    marks: rec.marks,
    longTasks: rec.longTasks,
    startedAt: rec.startedAt,
    stoppedAt: rec.stoppedAt,
  };
}

/** Notes the time the import's file input fires 'change' (before the app's own handler runs). */
export function watchImport(): void {
  window.__benchImportAt = undefined;
  const input = document.querySelector('[data-testid="import-file"]');
  if (!input) throw new Error('no import file input on the page');
  input.addEventListener('change', () => (window.__benchImportAt = performance.now()), {
    capture: true,
    once: true,
  });
}

/**
 * For page.waitForFunction (polled every frame): once the primary chart draws a line holding
 * `points` points, the ms since the import began and the points its smoothed line draws (after
 * thinning to the chart's width; the chart's table of lines says both).
 */
export function chartShows(points: number): { ms: number; vertices: number } | false {
  const line = document.querySelector('[data-testid="metric-chart"] [data-testid="chart-line"]');
  const start = window.__benchImportAt;
  if (!line || start === undefined || Number(line.getAttribute('data-points')) !== points) {
    return false;
  }
  return { ms: performance.now() - start, vertices: Number(line.getAttribute('data-drawn')) };
}
