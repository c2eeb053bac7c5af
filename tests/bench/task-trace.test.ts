/** The switch scenario's reading of a Chromium trace (bench/ui/task-trace.ts). */
import { describe, expect, it } from 'vitest';
import { longestTraceTasks, type TraceEvent } from '../../bench/ui/task-trace';

const MAIN = { pid: 1, tid: 7 };
const mark = (ts: number, message: string): TraceEvent => ({
  name: 'TimeStamp',
  ph: 'I',
  ...MAIN,
  ts,
  args: { data: { message } },
});
const task = (ts: number, dur: number, tdur: number, tid = MAIN.tid): TraceEvent => ({
  name: 'RunTask',
  ph: 'X',
  pid: 1,
  tid,
  ts,
  dur,
  tdur,
});

describe('longestTraceTasks', () => {
  it('takes the longest task of the main thread between each pair of marks, wall and thread time', () => {
    const events: TraceEvent[] = [
      { name: 'thread_name', ph: 'M', ...MAIN, ts: 0, args: { name: 'CrRendererMain' } },
      { name: 'thread_name', ph: 'M', pid: 1, tid: 9, ts: 0, args: { name: 'Compositor' } },
      mark(1_000, 'start a'),
      task(1_100, 30_000, 12_000), // 30 ms, of which 12 ms on a core
      task(40_000, 8_000, 8_000),
      task(41_000, 90_000, 90_000, 9), // another thread: not the page's main thread
      mark(60_000, 'end a'),
      task(70_000, 500_000, 500_000), // between the windows
      mark(100_000, 'start b'),
      task(100_500, 2_000, 1_500),
      mark(200_000, 'end b'),
    ];
    expect(longestTraceTasks(events)).toEqual([
      { name: 'a', ms: 30, cpuMs: 12 },
      { name: 'b', ms: 2, cpuMs: 1.5 },
    ]);
  });

  it('finds nothing without the renderer main thread', () => {
    expect(longestTraceTasks([mark(0, 'start a'), mark(1, 'end a')])).toEqual([]);
  });
});
