import { describe, expect, it } from 'vitest';
import { finalTableModel, sortedRowOrder } from '../../../src/state/compare-view/final-table-model';
import { catalog, defaultsOf } from '../../compare/fixtures';
import { view } from './helpers';

describe('finalTableModel', () => {
  it('takes the mean of the last k values and lists settings that differ (live changes too)', () => {
    const a = view(1, {
      spec: {
        algo: 'q-learning',
        env: 'cliffwalking',
        seed: 1,
        config: { ...defaultsOf('q-learning'), alpha: 0.5 },
      },
      series: { 'charts/episodic_return': { x: [1, 2, 3], y: [-30, -20, -10] } },
      events: [{ step: 3, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
    });
    const b = view(2, { series: { 'charts/episodic_return': { x: [1], y: [-100] } } });
    const model = finalTableModel([a, b], ['charts/episodic_return', 'reward/mean'], catalog, 2);
    // Run 1: (−20 + −10) / 2 = −15 from 2 values; run 2: −100 from its only value.
    expect(model.rows.map((r) => r.finals)).toEqual([
      [
        { value: -15, count: 2 },
        { value: NaN, count: 0 },
      ],
      [
        { value: -100, count: 1 },
        { value: NaN, count: 0 },
      ],
    ]);
    // alpha (0.5 vs 0.1) and epsilon (0.3 at the end vs 0.1), in the spec's order.
    expect(model.diffKeys).toEqual(['alpha', 'epsilon']);
    expect(model.rows.map((r) => r.settings)).toEqual([
      [{ text: '0.5' }, { text: '0.3', changed: 'changed live at update 3 (was 0.1)' }],
      [{ text: '0.1' }, { text: '0.1' }],
    ]);
    expect(model.window).toBe(2);
  });

  it('counts a key changed live as differing even when both runs end equal', () => {
    const a = view(1, { events: [{ step: 5, kind: 'hyperparams', changes: { alpha: 0.1 } }] });
    const model = finalTableModel([a, view(2)], [], catalog);
    expect(model.diffKeys).toEqual(['alpha']);
    expect(model.rows[0]!.settings).toEqual([
      { text: '0.1', changed: 'changed live at update 5 (was 0.1)' },
    ]);
  });

  it('works before the catalog has loaded (keys in the order met)', () => {
    const a = view(1, { spec: { ...view(1).spec, config: { gamma: 0.9, alpha: 0.2 } } });
    const b = view(2, { spec: { ...view(2).spec, config: { gamma: 0.99, alpha: 0.2 } } });
    expect(finalTableModel([a, b], [], undefined).diffKeys).toEqual(['gamma']);
  });
});

describe('sortedRowOrder', () => {
  it('sorts numbers either way, rows without a value last, ties in their order', () => {
    const keys = [3, NaN, 1, undefined, 2, 1];
    expect(sortedRowOrder(keys, false)).toEqual([2, 5, 4, 0, 1, 3]);
    expect(sortedRowOrder(keys, true)).toEqual([0, 4, 2, 5, 1, 3]);
  });

  it('compares numbers inside text as numbers', () => {
    expect(sortedRowOrder(['#10 a', '#9 b', '#2 c'], false)).toEqual([2, 1, 0]);
  });
});
