import { describe, expect, it } from 'vitest';
import {
  inspectHref,
  inspectTarget,
  inspectable,
  updateChoices,
} from '../../src/state/inspect-link';
import type { Inspection, KeptInspection } from '../../src/worker/run-protocol';

const update = (step: number): Inspection => ({
  kind: 'samples',
  algorithm: 'grpo',
  step,
  groupSize: 2,
  has: { ratio: true, value: false },
  samples: [],
});

describe('a link that opens a run in the inspector', () => {
  it('goes to the lab with the run named, and the lab reads the name back', () => {
    expect(inspectHref('run-12')).toBe('#/lab?inspect=run-12');
    expect(inspectTarget(inspectHref('run-12'))).toBe('run-12');
    expect(inspectTarget(inspectHref('a b&c'))).toBe('a b&c');
    expect(inspectTarget('#/lab')).toBeUndefined();
    expect(inspectTarget('#/lab?inspect=')).toBeUndefined();
    expect(inspectTarget('#/learn/04-grpo/01-x?inspect=run-1')).toBeUndefined();
  });

  it('is offered for the runs the inspector can show', () => {
    expect(inspectable({ task: 'copy' })).toBe(true);
    expect(inspectable({ env: 'cliffwalking' })).toBe(true);
    expect(inspectable({ env: 'cartpole' })).toBe(true);
    expect(inspectable({ env: 'bandit' })).toBe(false);
  });
});

describe('updateChoices: the updates the inspector switches between', () => {
  const first: KeptInspection = { role: 'first', step: 1, item: update(1) };
  const rise: KeptInspection = {
    role: 'rise',
    step: 14,
    gain: 0.1875,
    metric: 'reward/accuracy',
    item: update(14),
  };

  it('lists first, rise and last in update order, the rise with its gain', () => {
    const choices = updateChoices([rise, first], update(60));
    expect(choices.map((c) => c.label)).toEqual([
      'first: update 1',
      'rise: update 14 (+0.19 reward/accuracy)',
      'last: update 60',
    ]);
    expect(choices.map((c) => c.inspection.step)).toEqual([1, 14, 60]);
  });

  it('makes one choice of an update that plays two parts', () => {
    const early = { ...rise, step: 2, item: update(2) };
    expect(updateChoices([first, early], update(2)).map((c) => c.label)).toEqual([
      'first: update 1',
      'rise, last: update 2 (+0.19 reward/accuracy)',
    ]);
    expect(updateChoices([first], update(1)).map((c) => c.label)).toEqual([
      'first, last: update 1',
    ]);
  });

  it('offers the last update alone where nothing was kept, and nothing without an update', () => {
    expect(updateChoices([], update(5)).map((c) => c.label)).toEqual(['last: update 5']);
    expect(updateChoices([], null)).toEqual([]);
  });
});
