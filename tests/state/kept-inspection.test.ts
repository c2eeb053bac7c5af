import { describe, expect, it } from 'vitest';
import { keptInspection } from '../../src/state/kept-inspection';
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
