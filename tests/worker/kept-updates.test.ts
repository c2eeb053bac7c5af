import { describe, expect, it } from 'vitest';
import { MAX_KEPT, keepUpdate, mergeKept, type Kept } from '../../src/worker/kept-updates';

/** Feeds a run's metric update by update; the item is the update's own label. */
function feed(values: number[], from = 1) {
  let kept: Kept<string>[] = [];
  const reads: number[] = [];
  values.forEach((value, i) => {
    const step = from + i;
    const gain = i === 0 ? undefined : value - values[i - 1]!;
    kept = keepUpdate(kept, step, gain, () => {
      reads.push(step);
      return `update ${step}`;
    });
  });
  return { kept, reads };
}

const brief = (kept: Kept<string>[]) => kept.map((k) => [k.role, k.step, k.item]);

describe('keepUpdate: the first update and the rise, never more', () => {
  it('keeps the first update and the one that gained most over the update before', () => {
    // Gains: +0.05, -0.05, +0.30 (update 4), +0.10, -0.10, +0.05.
    const { kept, reads } = feed([0.2, 0.25, 0.2, 0.5, 0.6, 0.5, 0.55]);
    expect(brief(kept)).toEqual([
      ['first', 1, 'update 1'],
      ['rise', 4, 'update 4'],
    ]);
    expect(kept[1]!.gain).toBeCloseTo(0.3, 12);
    // Read only when kept: update 1 (first), 2 (a rise then), 4 (a larger one).
    expect(reads).toEqual([1, 2, 4]);
  });

  it('keeps no rise for a run whose metric never went up, and the earlier of two equal rises', () => {
    expect(brief(feed([1, 1, 0.5, 0.5]).kept)).toEqual([['first', 1, 'update 1']]);
    expect(brief(feed([0, 0.5, 0, 0.5]).kept)).toEqual([
      ['first', 1, 'update 1'],
      ['rise', 2, 'update 2'],
    ]);
  });

  it('stays bounded however long the run trains', () => {
    const values = Array.from({ length: 5000 }, (_, i) => Math.sin(i / 7) + i / 1000);
    const { kept } = feed(values);
    expect(kept.length).toBeLessThanOrEqual(MAX_KEPT);
    expect(kept.map((k) => k.role)).toEqual(['first', 'rise']);
  });

  it('keeps nothing for an update that has no item to read', () => {
    expect(keepUpdate<string>([], 3, 0.5, () => undefined)).toEqual([]);
  });

  it('ignores a gain that is not a number', () => {
    const first: Kept<string> = { role: 'first', step: 1, item: 'a' };
    expect(keepUpdate([first], 2, NaN, () => 'b')).toEqual([first]);
  });
});

describe('mergeKept: a stored run’s keeping and its new worker’s', () => {
  it('keeps the earlier first and the larger rise', () => {
    const stored: Kept<string>[] = [
      { role: 'first', step: 1, item: 'stored 1' },
      { role: 'rise', step: 9, gain: 0.2, item: 'stored 9' },
    ];
    // A worker brought back at update 30 calls its first update (31) "first".
    const worker: Kept<string>[] = [
      { role: 'first', step: 31, item: 'worker 31' },
      { role: 'rise', step: 35, gain: 0.25, item: 'worker 35' },
    ];
    expect(brief(mergeKept(stored, worker))).toEqual([
      ['first', 1, 'stored 1'],
      ['rise', 35, 'worker 35'],
    ]);
    const smaller = [{ ...worker[1]!, gain: 0.1 }];
    expect(brief(mergeKept(stored, smaller))).toEqual([
      ['first', 1, 'stored 1'],
      ['rise', 9, 'stored 9'],
    ]);
    expect(mergeKept([], [])).toEqual([]);
  });
});
