import { describe, expect, it } from 'vitest';
import { algorithm } from '../../src/rl/registry';
import type { GridInspection } from '../../src/rl/inspection';

describe('grid inspection', () => {
  it('value iteration on CliffWalking: the greedy path runs along the cliff edge to the goal', async () => {
    const algo = algorithm('value-iteration');
    if (algo.family !== 'env') throw new Error('env algorithm expected');
    const t = algo.create('cliffwalking', algo.defaults, 1);
    for (let i = 0; i < 30; i++) await t.update();
    const g = t.inspect!() as GridInspection;
    expect(g).toMatchObject({ kind: 'grid', rows: 4, cols: 12, start: 36, step: 30 });
    // The bottom row: start (36), cliff (37–46), goal (47).
    expect(g.cells.slice(37, 47).every((c) => c === 'cliff')).toBe(true);
    expect(g.cells[47]).toBe('goal');
    // Optimal: up from the start, right along row 2, down into the goal.
    expect(g.moves[36]).toEqual([-1, 0]);
    for (let c = 0; c < 11; c++) expect(g.moves[24 + c]).toEqual([0, 1]);
    expect(g.moves[35]).toEqual([1, 0]);
    expect(g.moves[47]).toEqual([0, 0]); // terminal
    // V(start): 13 steps of −1 (up, 11 right, down into the goal), discounted by γ = 0.99 (the
    // default): −Σ_{k<13} 0.99^k = −(1 − 0.99^13)/0.01 ≈ −12.2479.
    expect(algo.defaults.gamma).toBe(0.99);
    expect(g.values[36]).toBeCloseTo(-(1 - 0.99 ** 13) / 0.01, 6);
    expect(structuredClone(g)).toEqual(g);
  });

  it('Q-learning on a GridWorld reports max_a Q and its greedy moves; bandits have none', async () => {
    const algo = algorithm('q-learning');
    if (algo.family !== 'env') throw new Error('env algorithm expected');
    const t = algo.create('gridworld', algo.defaults, 2);
    for (let i = 0; i < 5; i++) await t.update();
    const g = t.inspect!() as GridInspection;
    expect(g.values).toHaveLength(21);
    expect(g.cells.filter((c) => c === 'wall')).toHaveLength(4);
    for (const [i, c] of g.cells.entries()) if (c === 'wall') expect(g.moves[i]).toEqual([0, 0]);
    expect(algo.create('bandit-10', algo.defaults, 1).inspect).toBeUndefined();
  });
});
