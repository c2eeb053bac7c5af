import { describe, expect, it } from 'vitest';
import {
  axisNotes,
  describeSmoothing,
  describeTrend,
  groupLabel,
  shortName,
} from '../../../src/state/compare-view/describe';
import { tokensAxis, UPDATE } from './helpers';

describe('words', () => {
  it.each([
    [0.12, 0.85, 0, 1, 'rises from 0.12 to 0.85'],
    [30, -13, -100, -13 + 100, 'falls from 30 to -13'],
    // |4.97 − 5| = 0.03 ≤ 5 % of the span 1: flat.
    [5, 4.97, 4.5, 5.5, 'stays near 4.97'],
    [2, 2, 2, 2, 'stays near 2'],
  ])('describeTrend(%d, %d, %d, %d)', (first, last, lo, hi, expected) => {
    expect(describeTrend(first, last, lo, hi)).toBe(expected);
  });

  it('names runs and seed groups', () => {
    expect(shortName('#12 grpo on reverse, seed 3')).toBe('run #12');
    expect(shortName('imported run')).toBe('imported run');
    expect(
      groupLabel([
        { label: '#1 q-learning on cliffwalking, seed 1' },
        { label: '#4 q-learning on cliffwalking, seed 7' },
      ]),
    ).toBe('runs #1, #4: q-learning on cliffwalking, seeds 1, 7');
  });

  it('merges the same axis note of several runs', () => {
    const approx = tokensAxis([1], 'approximate');
    expect(
      axisNotes([
        { label: '#1 a', axis: approx },
        { label: '#2 b', axis: tokensAxis([1], 'unknown from update 3 on') },
        { label: '#3 c', axis: approx },
        { label: '#4 d', axis: UPDATE },
        { label: '#5 e', axis: { ok: false, axis: 'tokens', reason: 'none' } },
      ]),
    ).toEqual(['runs #1 and #3: approximate', 'run #2: unknown from update 3 on']);
  });

  it('describes the smoothing', () => {
    expect(describeSmoothing({ kind: 'none' })).toBe('not smoothed');
    expect(describeSmoothing({ kind: 'ema', weight: 0.6 })).toBe('debiased EMA, weight 0.6');
    expect(describeSmoothing({ kind: 'moving-average', window: 1 })).toBe(
      'moving average of 1 point',
    );
  });
});
