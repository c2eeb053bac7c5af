import { describe, expect, it } from 'vitest';
import {
  extentOf,
  isRateMetric,
  mergeExtents,
  niceRange,
  yScale,
} from '../../../src/state/charts/y-scale';

describe('yScale', () => {
  it.each([
    // A rate keeps 0–1 even when every value sits at 0.97–1: one miss is a small dip.
    ['reward/accuracy', [0.97, 1, 0.98], { kind: 'linear', min: 0, max: 1 }],
    ['frac_reward_zero_std', [0.2, 0.3], { kind: 'linear', min: 0, max: 1 }],
    // A "rate" outside 0–1 is not a share: its own range.
    ['charts/optimal_action_rate', [-2, 3], { kind: 'linear', min: -2, max: 3 }],
    // Positive values over two decades or more: log, from power of ten to power of ten.
    ['values/max_delta', [0.9, 0.01, 2.6e-7], { kind: 'log', min: 1e-7, max: 1 }],
    ['actor/grad_variance', [24.2, 0.5, 3.1e-6], { kind: 'log', min: 1e-6, max: 100 }],
    // Under two decades, or touching zero: linear, widened to round steps.
    ['actor/grad_variance', [1.5, 19.6], { kind: 'linear', min: 0, max: 20 }],
    ['charts/episodic_return', [-287.3, -13], { kind: 'linear', min: -300, max: 0 }],
    ['values/mean', [0, 0.5, 200], { kind: 'linear', min: 0, max: 200 }],
    ['anything', [], { kind: 'linear', min: 0, max: 1 }],
  ] as const)('%s over %j → %j', (metric, values, expected) => {
    expect(yScale(metric, extentOf([values]))).toEqual(expected);
  });

  it('one scale for charts compared side by side: the union of their extents', () => {
    const a = extentOf([[24.2, 0.5]]);
    const b = extentOf([[2.29, 6.8e-5]]);
    expect(yScale('actor/grad_variance', mergeExtents([a, b]))).toEqual({
      kind: 'log',
      min: 1e-5,
      max: 100,
    });
  });

  it('log: false keeps a linear scale', () => {
    expect(yScale('x', extentOf([[1e-6, 1]]), { log: false }).kind).toBe('linear');
  });

  it('names rates, accuracies, fractions and probabilities, not other metrics', () => {
    expect(
      ['reward/accuracy', 'rewards/accuracies', 'actor/pg_clipfrac', 'retained/success_rate'].map(
        isRateMetric,
      ),
    ).toEqual([true, true, true, true]);
    expect(['reward/mean', 'actor/entropy', 'values/max_delta'].map(isRateMetric)).toEqual([
      false,
      false,
      false,
    ]);
  });

  it('widens a flat range around its value', () => {
    expect(niceRange(5, 5)).toEqual({ min: 4.75, max: 5.25 });
    expect(niceRange(0, 0)).toEqual({ min: -0.5, max: 0.5 });
    // Nearly flat at a large value: a span near float resolution would give ticks that never
    // advance (an endless loop of axis splits); it is widened like a flat one.
    expect(niceRange(1123.75, 1123.75 + 1e-12)).toEqual({
      min: 1123.75 - 56.1875,
      max: 1123.75 + 1e-12 + 56.1875,
    });
  });
});
