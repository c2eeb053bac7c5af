import { describe, expect, it } from 'vitest';
import { alignSeries, configAt, tasksFor, updateCount } from '../../src/compare/run-record';
import { catalog, makeRun } from './fixtures';

describe('run records', () => {
  it('configAt applies the live changes recorded up to that update', () => {
    const run = makeRun({
      algorithm: 'grpo',
      config: { lr: 0.1, groupSize: 4 },
      events: [
        { step: 3, kind: 'hyperparams', changes: { lr: 0.2 } },
        { step: 3, kind: 'skipped-update', reason: 'x' },
        { step: 5, kind: 'hyperparams', changes: { lr: 0.3 } },
      ],
    });
    expect(configAt(run, 2)).toEqual({ lr: 0.1, groupSize: 4 });
    expect(configAt(run, 3)).toEqual({ lr: 0.2, groupSize: 4 });
    expect(configAt(run, 9)).toEqual({ lr: 0.3, groupSize: 4 });
  });

  it('alignSeries puts each value at its update, NaN between thinned points', () => {
    const aligned = alignSeries({ a: { x: [1, 2, 4], y: [10, 20, 40] }, b: { x: [3], y: [7] } });
    expect(aligned).toEqual({ a: [10, 20, NaN, 40], b: [NaN, NaN, 7, NaN] });
    expect(updateCount({ metrics: aligned })).toBe(4);
  });

  it('tasksFor: environments for env algorithms, token tasks for language models', () => {
    const algo = (name: string) => catalog.algorithms.find((a) => a.name === name)!;
    expect(tasksFor(catalog, algo('ppo-mlp'))).toEqual(['cartpole']);
    expect(tasksFor(catalog, algo('grpo'))).toContain('reverse');
  });
});
