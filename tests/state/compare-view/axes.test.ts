import { describe, expect, it } from 'vitest';
import { pointsOnAxis, runAxis } from '../../../src/state/compare-view/axes';
import { tokensAxis, UPDATE, view } from './helpers';

describe('runs as records and axes', () => {
  it('env steps of Q-learning: running sum of episode lengths; update needs no metric', () => {
    // Episode lengths 5, 3, 4 → environment steps 5, 8, 12.
    const run = view(1, {
      series: {
        'charts/episodic_length': { x: [1, 2, 3], y: [5, 3, 4] },
        'charts/episodic_return': { x: [1, 2, 3], y: [-10, -7, -4] },
      },
    });
    const axis = runAxis(run, 'env_steps');
    expect(axis.ok && [1, 2, 3, 4].map(axis.at)).toEqual([5, 8, 12, NaN]);
    expect(pointsOnAxis(run.series['charts/episodic_return']!, axis)).toEqual({
      x: [5, 8, 12],
      y: [-10, -7, -4],
    });
    const update = runAxis(view(2), 'update');
    expect(update.ok && update.at(7)).toBe(7);
  });

  it('reads a run the lab thinned in blocks, with totals and markers at the right updates', () => {
    // 30 000 episodes; the lab kept updates 2, 4, …, 30 000, each with the mean length of its
    // two episodes (2 and 4 alternate, so every mean is 3). Blocks span 2 updates, so environment
    // steps at kept update u are 3 · u, exactly (6 per block of two episodes).
    const x = Array.from({ length: 15_000 }, (_, i) => 2 * (i + 1));
    const lengths = { x, y: x.map(() => 3) };
    const returns = { x, y: x.map(() => -1) };
    const run = view(1, {
      series: { 'charts/episodic_length': lengths, 'charts/episodic_return': returns },
    });
    const axis = runAxis(run, 'env_steps');
    if (!axis.ok) throw new Error(axis.reason);
    const points = pointsOnAxis(returns, axis);
    expect(points.x.slice(0, 3)).toEqual([6, 12, 18]);
    expect(points.x.at(-1)).toBe(90_000);
    // Update 3 lies between kept updates 2 (x 6) and 4 (x 12): interpolated, 9.
    expect(axis.at(3)).toBe(9);
    expect(axis.at(30_001)).toBeNaN();
    expect(axis.note).toBe(
      'approximate: the lab merged older updates into means to keep at most 10000 points, so totals over them are estimates',
    );
  });

  it('names real updates in the notes of a long run, and is exact when every update is kept', () => {
    // 12 000 updates, all kept (an imported run): no merging, so no "approximate" note; episode
    // length unknown at update 11 000 → the total is unknown from there on.
    const x = Array.from({ length: 12_000 }, (_, i) => i + 1);
    const y = x.map((u) => (u === 11_000 ? NaN : 1));
    const run = view(1, { series: { 'charts/episodic_length': { x, y } } });
    const axis = runAxis(run, 'env_steps');
    if (!axis.ok) throw new Error(axis.reason);
    expect(axis.at(10_999)).toBe(10_999);
    expect(axis.at(11_000)).toBeNaN();
    expect(axis.note).toBe('unknown from update 11000 on: that update has no known episode length');
    // Read per update, not in blocks: its points' x stay put, so a redraw extends them.
    expect(axis.stable).toBe(true);
  });

  it('gives the reason when a long run has no axis', () => {
    const x = Array.from({ length: 10_001 }, (_, i) => i + 1);
    const run = view(1, { series: { 'timing_s/step': { x, y: x.map(() => 0.01) } } });
    expect(runAxis(run, 'tokens')).toEqual({
      ok: false,
      axis: 'tokens',
      reason: 'q-learning is not a language-model algorithm: it samples no tokens',
    });
    // Σ seconds per update: 0.01 · 10 001 at the last update.
    const wall = runAxis(run, 'wall_time');
    expect(wall.ok && wall.at(10_001)).toBeCloseTo(100.01, 9);
  });

  it('pointsOnAxis drops points whose x or y is not finite', () => {
    const axis = tokensAxis([10, NaN, 30, 40]);
    const series = { x: [1, 2, 3, 4], y: [1, 2, NaN, 4] };
    // Update 2 has no x, update 3 no value: left (10, 1) and (40, 4).
    expect(pointsOnAxis(series, axis)).toEqual({ x: [10, 40], y: [1, 4] });
    expect(pointsOnAxis(series, UPDATE)).toEqual({ x: [1, 2, 4], y: [1, 2, 4] });
    expect(pointsOnAxis(series, { ok: false, axis: 'tokens', reason: 'no' })).toEqual({
      x: [],
      y: [],
    });
  });
});
