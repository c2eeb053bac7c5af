import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bandCaption, groupBand, groupBySeed, seedBand } from '../../src/compare/seed-groups';
import { defaultsOf, makeRun } from './fixtures';

describe('groupBySeed', () => {
  it('groups runs that differ only in seed; config, task and live changes split groups', () => {
    const base = { algorithm: 'grpo', task: 'reverse' };
    const a = makeRun({ ...base, seed: 1 });
    const b = makeRun({ ...base, seed: 2 });
    const otherLr = makeRun({ ...base, seed: 3, config: { ...defaultsOf('grpo'), lr: 0.01 } });
    const otherTask = makeRun({ ...base, task: 'sort', seed: 4 });
    const changed = makeRun({
      ...base,
      seed: 5,
      events: [{ step: 40, kind: 'hyperparams', changes: { lr: 0.01 } }],
    });
    // A skipped update is something that happened to the run, not a different experiment.
    const skipped = makeRun({
      ...base,
      seed: 6,
      events: [{ step: 2, kind: 'skipped-update', reason: 'non-finite loss' }],
    });
    // The same config written in another key order is the same experiment.
    const reordered = makeRun({
      ...base,
      seed: 7,
      config: Object.fromEntries(Object.entries(defaultsOf('grpo')).reverse()),
    });
    const groups = groupBySeed([a, otherLr, b, otherTask, changed, skipped, reordered]);
    expect(groups.map((g) => g.seeds)).toEqual([[1, 2, 6, 7], [3], [4], [5]]);
    expect(groups[0]!.runs).toEqual([a, b, skipped, reordered]);
  });
});

describe('seedBand', () => {
  it('matches a hand-worked 3-run example (two-pass, n − 1, only runs that have the point)', () => {
    // update 1: 1, 3, 5 → mean 3; squares 4 + 0 + 4 = 8; 8 / (3 − 1) = 4 → std 2.
    // update 2: 2, 2, 8 → mean 4; squares 4 + 4 + 16 = 24; 24 / 2 = 12 → std √12.
    // update 3: only 4 (NaN and a shorter run) → mean 4, std 0, n = 1.
    const band = seedBand([
      [1, 2, 4],
      [3, 2, NaN],
      [5, 8],
    ]);
    expect(band.mean).toEqual([3, 4, 4]);
    expect(band.std[0]).toBeCloseTo(2, 12);
    expect(band.std[1]).toBeCloseTo(Math.sqrt(12), 12);
    expect(band.std[2]).toBe(0);
    expect(band.count).toEqual([3, 3, 1]);
    expect(band.caption).toBe('mean ± 1 std over 1–3 seeds');
  });

  it('says "mean ± 1 std over 3 seeds" when every update has all three', () => {
    expect(seedBand([[1], [2], [3]]).caption).toBe('mean ± 1 std over 3 seeds');
  });

  it('one run: std 0 and the caption says "1 seed"', () => {
    const band = seedBand([[1, 2]]);
    expect(band.std).toEqual([0, 0]);
    expect(band.caption).toBe('1 seed');
  });

  it('an update no run reported is NaN with count 0', () => {
    const band = seedBand([
      [NaN, 1],
      [NaN, 3],
    ]);
    expect(band.mean[0]).toBeNaN();
    expect(band.std[0]).toBeNaN();
    expect(band.count).toEqual([0, 2]);
    expect(bandCaption(Infinity, 0, 2)).toBe('2 seeds, no values');
  });

  it('groupBand says "runs" when a group repeats a seed', () => {
    const a = makeRun({ algorithm: 'grpo', seed: 1, metrics: { r: [1] } });
    const b = makeRun({ algorithm: 'grpo', seed: 1, metrics: { r: [3] } });
    const [group] = groupBySeed([a, b]);
    expect(groupBand(group!, 'r').caption).toBe('mean ± 1 std over 2 runs');
  });

  it('shifting every run by c shifts the mean by c and keeps the std', () => {
    const finite = fc.double({ min: -1e3, max: 1e3, noNaN: true });
    fc.assert(
      fc.property(
        fc.array(fc.array(finite, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 5 }),
        finite,
        (runs, c) => {
          const band = seedBand(runs);
          const shifted = seedBand(runs.map((r) => r.map((v) => v + c)));
          for (let i = 0; i < 3; i++) {
            expect(shifted.mean[i]).toBeCloseTo(band.mean[i]! + c, 6);
            expect(shifted.std[i]).toBeCloseTo(band.std[i]!, 6);
            expect(band.std[i]).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});
