import { describe, expect, it } from 'vitest';
import { chartMetrics, moreMetrics } from '../../../src/state/compare-view/metrics';

describe('chartMetrics and moreMetrics', () => {
  const present = new Set([
    'losses/td_error',
    'actor/entropy',
    'charts/episodic_return',
    'reward/mean',
    'charts/epsilon',
  ]);

  it('keeps the key metrics some run logged, in the key order', () => {
    expect(chartMetrics(present)).toEqual([
      'reward/mean',
      'charts/episodic_return',
      'actor/entropy',
    ]);
  });

  it('adds the picked extra metric last, once, and only when logged', () => {
    expect(chartMetrics(present, 'losses/td_error').at(-1)).toBe('losses/td_error');
    expect(chartMetrics(present, 'reward/mean')).toHaveLength(3);
    expect(chartMetrics(present, 'critic/vf_loss')).toHaveLength(3);
  });

  it('offers the metrics without a chart, sorted', () => {
    expect(moreMetrics(present)).toEqual(['charts/epsilon', 'losses/td_error']);
  });
});
