/**
 * Runs and axes shared by the compare-view tests (tests/state/compare-view/*.test.ts): a q-learning run
 * as the compare view reads it, the same run as a chart reads it, and axes from given x values.
 */
import { UPDATE_AXIS, type RunAxis } from '../../../src/state/compare-view/axes';
import type { ChartRun } from '../../../src/state/compare-view/chart-types';
import type { RunView } from '../../../src/state/compare-view/run-view';
import { defaultsOf } from '../../compare/fixtures';

export const UPDATE = UPDATE_AXIS;

/** An axis from per-update x values (index u − 1 = update u). */
export const tokensAxis = (values: number[], note?: string): RunAxis => ({
  ok: true,
  axis: 'tokens',
  at: (step) => values[step - 1] ?? NaN,
  source: 'test',
  ...(note ? { note } : {}),
  key: `tokens ${values.join(' ')}`,
  stable: true,
});

/** A q-learning run on cliffwalking as the compare view reads it. */
export function view(n: number, overrides: Partial<RunView> = {}): RunView & { dash: string } {
  return {
    id: `run-${n}`,
    label: `#${n} q-learning on cliffwalking, seed ${n}`,
    color: '#000000',
    dash: '',
    spec: { algo: 'q-learning', env: 'cliffwalking', seed: n, config: defaultsOf('q-learning') },
    series: {},
    events: [],
    ...overrides,
  };
}

export function chartRun(n: number, overrides: Partial<ChartRun> = {}): ChartRun {
  const v = view(n);
  return { ...v, axis: UPDATE, ...overrides };
}
