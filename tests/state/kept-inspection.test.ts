import { describe, expect, it } from 'vitest';
import { keptInspection, keptUpdates } from '../../src/state/kept-inspection';
import type { InspectedSample, SampleInspection } from '../../src/worker/run-protocol';

const sample = (group: number, tokens: number): InspectedSample => ({
  group,
  prompt: 'ab=',
  completion: 'ba',
  reward: 1,
  advantage: 0.5,
  tokens: Array.from({ length: tokens }, () => ({
    text: 'a',
    trained: true,
    observation: false,
    advantage: 0.5,
    ratio: 1,
    clipped: false,
  })),
});

const samples = (counts: number[]): SampleInspection => ({
  kind: 'samples',
  algorithm: 'grpo',
  step: 25,
  groupSize: 2,
  has: { ratio: true, value: false },
  samples: counts.map((n, i) => sample(Math.floor(i / 2), n)),
});

describe('keptInspection', () => {
  it('keeps an update within the bound as it is', () => {
    const inspection = samples([10, 10, 10]);
    expect(keptInspection(inspection, 30)).toBe(inspection);
  });

  it('keeps whole samples, in order, up to the token bound', () => {
    const kept = keptInspection(samples([10, 10, 10, 10]), 25);
    expect(kept.kind === 'samples' && kept.samples.map((s) => s.tokens.length)).toEqual([10, 10]);
    expect(kept).toMatchObject({ step: 25, groupSize: 2 });
  });

  it('keeps at least one sample, however long', () => {
    const kept = keptInspection(samples([50, 10]), 25);
    expect(kept.kind === 'samples' && kept.samples).toHaveLength(1);
  });

  it('keeps grids as they are', () => {
    const grid = {
      kind: 'grid' as const,
      algorithm: 'q-learning',
      step: 3,
      rows: 1,
      cols: 1,
      cells: ['goal'],
      start: 0,
      values: [0],
      moves: [[0, 0] as [number, number]],
    };
    expect(keptInspection(grid, 1)).toBe(grid);
  });
});

describe('keptUpdates: a run’s earlier updates once its worker reports its own', () => {
  const at = (step: number, counts: number[]) => ({ ...samples(counts), step });

  it('bounds each of the worker’s updates and keeps the stored first over a resumed one', () => {
    const stored = [{ role: 'first' as const, step: 1, item: at(1, [10]) }];
    const fromWorker = [
      { role: 'first' as const, step: 31, item: at(31, [10]) },
      { role: 'rise' as const, step: 33, gain: 0.2, item: at(33, [10, 10, 10, 10]) },
    ];
    const kept = keptUpdates(stored, fromWorker, 25);
    expect(kept.map((k) => [k.role, k.step])).toEqual([
      ['first', 1],
      ['rise', 33],
    ]);
    const rise = kept[1]!.item;
    expect(rise.kind === 'samples' && rise.samples.map((s) => s.tokens.length)).toEqual([10, 10]);
  });
});
