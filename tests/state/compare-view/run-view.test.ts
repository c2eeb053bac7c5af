import { describe, expect, it } from 'vitest';
import { runRecord } from '../../../src/state/compare-view/run-view';
import { view } from './helpers';

describe('runs as records and axes', () => {
  it('adds task options as task.<name> and the warm-up as sftSteps, task from env or task', () => {
    const lm = view(1, {
      spec: {
        algo: 'grpo',
        task: 'reverse',
        seed: 4,
        config: { lr: 0.01 },
        taskOptions: { maxLength: 5 },
        sftSteps: 100,
      },
      series: { 'reward/mean': { x: [1, 3], y: [0.5, 0.7] } },
    });
    const record = runRecord(lm, ['reward/mean', 'not/logged']);
    expect(record).toEqual({
      algorithm: 'grpo',
      task: 'reverse',
      seed: 4,
      config: { lr: 0.01, 'task.maxLength': 5, sftSteps: 100 },
      metrics: { 'reward/mean': [0.5, NaN, 0.7] },
      events: [],
    });
    expect(runRecord(view(2)).task).toBe('cliffwalking');
  });

  it("never reads Object.prototype's members as a run's metrics", () => {
    const run = view(1, { series: { toString: { x: [1], y: [4] } } });
    expect(runRecord(run, ['toString', 'constructor', 'hasOwnProperty']).metrics).toEqual({
      toString: [4],
    });
    expect(runRecord(view(2), ['toString', 'constructor']).metrics).toEqual({});
  });
});
