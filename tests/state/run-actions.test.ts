import { describe, expect, it } from 'vitest';
import { canTrain, startable } from '../../src/state/run-actions';
import type { LabRun } from '../../src/state/runs.svelte';

type Run = Pick<LabRun, 'busy' | 'status' | 'failure'> & { id: string };
const run = (id: string, status: LabRun['status'], over: Partial<Run> = {}): Run => ({
  id,
  status,
  busy: false,
  failure: undefined,
  ...over,
});

describe('run actions', () => {
  it.each([
    ['idle', true],
    ['paused', true],
    ['stored', true],
    ['running', false],
    ['warming', false],
    ['error', false],
  ] as const)('a %s run can train: %s', (status, expected) => {
    expect(canTrain(run('a', status))).toBe(expected);
  });

  it('a busy run cannot; one whose worker died can', () => {
    expect(canTrain(run('a', 'idle', { busy: true }))).toBe(false);
    expect(canTrain(run('a', 'error', { failure: 'the worker died' }))).toBe(true);
  });

  it('"Start all" takes the stored, idle and paused runs, in order', () => {
    const runs = [
      run('1', 'stored'),
      run('2', 'running'),
      run('3', 'idle'),
      run('4', 'warming'),
      run('5', 'paused'),
    ];
    expect(startable(runs).map((r) => r.id)).toEqual(['1', '3', '5']);
  });
});
