/**
 * The checks a lesson widget runs against its run, written in the lesson as `check="…"`:
 *
 *   <metric> <op> <number>   the mean of the metric's last WINDOW values (fewer are not enough)
 *                            compared with the number, e.g. `values/converged>=1`
 *   … after <n>              the same, judged only from the n-th value on: for what must still
 *                            hold late in a run, e.g. `reward/strict_accuracy>=0.25 after 30`
 *   <metric> gain <op> <n>   an effect, not a level: the mean of the last WINDOW values minus the
 *                            mean of the first BASELINE values (the start as this run measured
 *                            it), judged once the two windows no longer overlap, e.g.
 *                            `reward/accuracy gain>=0.3`. A level check passes for a start that was
 *                            already there; a gain check only for a run that moved.
 *   path <op> <number>       the greedy path from the start of a grid world reaches the goal, and
 *                            its length in steps compares so, e.g. `path<=13` on CliffWalking
 *
 * op is one of >=, <=, >, <. Pure functions: the widget and the CPU tests share them.
 */
import { BASELINE, WINDOW, compare, type CheckOp, type MetricCheck } from '../worker/metric-check';
import type { Inspection } from '../worker/run-protocol';

type GridInspection = Extract<Inspection, { kind: 'grid' }>;

// The metric checks' arithmetic lives with the worker, which judges a lesson run's goal after
// every update (src/worker/metric-check.ts); the lesson parser and the widgets read it from here.
export {
  BASELINE,
  WINDOW,
  baselineMean,
  checkedValue,
  compare,
  metricCheckPassed,
  windowMean,
  type CheckOp,
  type MetricCheck,
} from '../worker/metric-check';

export type Check = MetricCheck | { kind: 'path'; op: CheckOp; value: number; text: string };

const PATTERN =
  /^\s*([A-Za-z_][\w/.-]*)(\s+gain)?\s*(>=|<=|>|<)\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?:\s+after\s+(\d+))?\s*$/;

/** Parses a check; a message naming what is wrong otherwise (the lesson parser adds file:line). */
export function parseCheck(text: string): Check | string {
  const match = PATTERN.exec(text);
  if (!match)
    return `check must read '<metric> [gain] <op> <number> [after <updates>]' with op one of >=, <=, >, <; got '${text}'`;
  const [, name, gainText, op, number, afterText] = match as unknown as [
    string,
    string,
    string | undefined,
    CheckOp,
    string,
    string | undefined,
  ];
  const value = Number(number);
  const gain = gainText !== undefined;
  const least = gain ? BASELINE + WINDOW : WINDOW;
  const after = afterText === undefined ? least : Number(afterText);
  if (after < least || after > 10_000) {
    return `'after' must be a whole number of updates in [${least}, 10000]${gain ? ' for a gain check' : ''}, got ${afterText ?? ''}`;
  }
  if (name === 'path') {
    if (afterText !== undefined) return "a path check has no 'after'";
    if (gain) return "a path check has no 'gain'";
    if (!Number.isInteger(value) || value < 1)
      return `a path check needs a length ≥ 1, got ${number}`;
    return { kind: 'path', op, value, text: text.trim() };
  }
  return { kind: 'metric', metric: name, op, value, after, gain, text: text.trim() };
}

export interface GreedyPath {
  /** Visited cells, start first. */
  cells: number[];
  /** 'goal' when it ends on a goal cell; otherwise why it stopped. */
  end: 'goal' | 'cliff' | 'hole' | 'stuck' | 'loop';
}

/**
 * Follows the greedy moves from the start: stops on a goal, cliff or hole, when a move leaves the
 * grid or hits a wall (stuck), or when a cell repeats (loop). Deterministic moves only: it reads
 * the policy, it does not simulate slips.
 */
export function greedyPath(grid: GridInspection): GreedyPath {
  const cells = [grid.start];
  const seen = new Set(cells);
  let cell = grid.start;
  for (;;) {
    const kind = grid.cells[cell];
    if (kind === 'goal' || kind === 'cliff' || kind === 'hole') {
      return { cells, end: kind };
    }
    const [dr, dc] = grid.moves[cell] ?? [0, 0];
    const row = Math.floor(cell / grid.cols) + dr;
    const col = (cell % grid.cols) + dc;
    const stuck =
      (dr === 0 && dc === 0) || row < 0 || row >= grid.rows || col < 0 || col >= grid.cols;
    if (stuck || grid.cells[row * grid.cols + col] === 'wall') return { cells, end: 'stuck' };
    cell = row * grid.cols + col;
    if (seen.has(cell)) return { cells, end: 'loop' };
    seen.add(cell);
    cells.push(cell);
  }
}

export function pathCheckPassed(check: Check & { kind: 'path' }, grid: GridInspection): boolean {
  const path = greedyPath(grid);
  return path.end === 'goal' && compare(path.cells.length - 1, check.op, check.value);
}
