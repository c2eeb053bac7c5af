/**
 * The longest main-thread task while the page reacts to an input, from a Chromium trace. Long-task
 * entries (PerformanceObserver) start at 50 ms — the target itself — and give wall time only; the
 * trace has every task of the renderer's main thread (RunTask) with its wall time (`dur`) and its
 * thread time (`tdur`, the CPU the thread spent on it). On a machine whose cores are busy with
 * other processes the wall time also counts the time the thread waited for a core; the thread
 * time is the page's own cost. Pure: no browser.
 */

/** A trace event as Chromium's tracing writes it (the fields read here). */
export interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string; data?: { message?: string } };
}

/** The trace categories longestTraceTasks reads: main-thread tasks and console.timeStamp marks. */
export const TASK_TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'toplevel',
];

/** The longest task of one window: wall ms and thread (CPU) ms. */
export interface WindowTask {
  name: string;
  ms: number;
  cpuMs: number;
}

/**
 * The longest main-thread task of the page in each window, a window running from the
 * console.timeStamp mark `start <name>` to the next `end <name>`, in the order of the marks.
 */
export function longestTraceTasks(events: readonly TraceEvent[]): WindowTask[] {
  const main = events.find(
    (e) => e.ph === 'M' && e.name === 'thread_name' && e.args?.name === 'CrRendererMain',
  );
  if (!main) return [];
  const onMain = (e: TraceEvent) => e.pid === main.pid && e.tid === main.tid;
  const marks = events
    .filter((e) => e.name === 'TimeStamp' && onMain(e))
    .map((e) => ({ ts: e.ts, message: e.args?.data?.message ?? '' }))
    .sort((a, b) => a.ts - b.ts);
  const tasks = events.filter((e) => e.name === 'RunTask' && e.ph === 'X' && onMain(e));
  const out: WindowTask[] = [];
  for (const start of marks) {
    if (!start.message.startsWith('start ')) continue;
    const name = start.message.slice('start '.length);
    const end = marks.find((m) => m.message === `end ${name}` && m.ts > start.ts);
    if (!end) continue;
    let ms = 0;
    let cpuMs = 0;
    for (const t of tasks) {
      if (t.ts < start.ts || t.ts >= end.ts) continue;
      ms = Math.max(ms, (t.dur ?? 0) / 1000);
      cpuMs = Math.max(cpuMs, (t.tdur ?? t.dur ?? 0) / 1000);
    }
    out.push({ name, ms, cpuMs });
  }
  return out;
}
