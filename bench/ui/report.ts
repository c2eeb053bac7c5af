/** The printed tables of the UI frame bench (env 'chromium-ui'). Pure: no I/O. */
import { formatMs, formatTable } from '../core/stats';
import type { EnvResult, SuiteResult } from '../core/types';
import { FRAME_BUDGET_MS, IDLE_ROW, SWITCH_ROW, SWITCH_TASK_MS, vsyncsOf } from './frame-stats';

export function renderFrameSuite(suite: SuiteResult): string {
  const footnotes: string[] = [];
  const rows = suite.measurements.map((m) => {
    const f = m.frames;
    if (m.status !== 'ok' || !f) {
      footnotes.push(`[${footnotes.length + 1}] ${m.impl}: ${m.reason ?? m.status}`);
      return [m.impl, `${m.status} [${footnotes.length}]`, ...Array<string>(9).fill('–')];
    }
    const tasks = f.longTasks
      ? `${f.longTasks.count} (${formatMs(f.longTasks.totalMs)} ms)`
      : 'unsupported';
    return [
      m.impl,
      String(f.intervals),
      (f.windowMs / 1000).toFixed(1),
      formatMs(f.p50),
      formatMs(f.p95),
      formatMs(f.p99),
      formatMs(f.max),
      String(f.over16_7),
      String(f.over33_4),
      String(f.droppedFrames),
      tasks,
    ];
  });
  const header = [
    'scenario',
    'frames',
    's',
    'p50 ms',
    'p95 ms',
    'p99 ms',
    'max ms',
    `>${FRAME_BUDGET_MS}`,
    `>${(2 * FRAME_BUDGET_MS).toFixed(1)}`,
    'dropped',
    'long tasks',
  ];
  const details = suite.measurements
    .filter((m) => m.frames && Object.keys(m.frames.details).length > 0)
    .map(
      (m) =>
        `${m.impl.trim()}: ${Object.entries(m.frames!.details)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}`,
    );
  return [suite.title, formatTable(header, rows), ...footnotes, ...details].join('\n');
}

export function renderUiEnv(result: EnvResult): string {
  const { env } = result;
  const lines = [`=== ${env.name}: the lab page in headless Chromium ===`];
  lines.push(`runtime: Chromium ${env.runtime}`, ...env.notes.map((n) => `note: ${n}`));
  for (const suite of result.suites) lines.push('', renderFrameSuite(suite));
  lines.push('', `(${result.seconds.toFixed(0)} s in this environment)`);
  return lines.join('\n');
}

/**
 * The issue's target, met or missed: p95 frame time ≤ 16.7 ms (one 60 Hz frame) with four runs
 * training. rAF timestamps sit on the vsync grid with about ±0.2 ms of jitter, so an on-time frame
 * reads 16.6–16.8 ms and even the idle lab page's p95 reads 16.8 (the baseline row, quoted here):
 * the p95 interval is judged in vsyncs, met when it is one.
 */
export function renderUiTarget(results: EnvResult[], suiteName: string): string[] {
  const lines: string[] = [];
  for (const { env, suites } of results) {
    const rows = suites.find((s) => s.suite === suiteName)?.measurements ?? [];
    const switched = rows.find((m) => m.impl === SWITCH_ROW)?.frames?.details;
    if (switched?.longestTaskMs !== undefined) {
      const d = switched;
      const verdict = (ms: number | undefined) =>
        ms === undefined ? '?' : ms <= SWITCH_TASK_MS ? 'met' : 'MISSED';
      lines.push(
        `${env.name} switching x-axis or smoothing of a 100k-point run, longest main-thread task (target ≤ ${SWITCH_TASK_MS} ms): ` +
          `thread time ${formatMs(d.longestTaskCpuMs ?? NaN)} ms worst, ${formatMs(d.medianLongestTaskCpuMs ?? NaN)} ms median over the switches (${verdict(d.longestTaskCpuMs)}); ` +
          `wall time ${formatMs(d.longestTaskMs ?? NaN)} ms worst, ${formatMs(d.medianLongestTaskMs ?? NaN)} ms median (${verdict(d.longestTaskMs)}; counts waits for a core on a busy machine)`,
      );
    }
    const row = rows.find((m) => m.impl === 'four runs training');
    if (!row) continue;
    if (row.status !== 'ok' || !row.frames) {
      lines.push(`${env.name} four runs training: ${row.status}: ${row.reason ?? ''}`);
      continue;
    }
    const p95 = row.frames.p95;
    const vsyncs = vsyncsOf(p95);
    const verdict = vsyncs === 1 ? 'met' : `MISSED: ${vsyncs} vsyncs`;
    const idle = rows.find((m) => m.impl === IDLE_ROW)?.frames?.p95;
    const baseline =
      idle === undefined ? '' : `; the idle lab page's p95 reads ${formatMs(idle)} ms`;
    lines.push(
      `${env.name} four runs training: p95 frame ${formatMs(p95)} ms = ${vsyncs} vsync${vsyncs > 1 ? 's' : ''} (≤ ${FRAME_BUDGET_MS} ms, one frame, judged on the vsync grid: ${verdict}${baseline})`,
    );
  }
  return lines;
}
