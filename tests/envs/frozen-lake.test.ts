import { describe, expect, it } from 'vitest';
import { createFrozenLake, FROZEN_LAKE_MAPS } from '../../src/envs/frozen-lake';
import { DOWN, LEFT, RIGHT, UP } from '../../src/envs/gridworld';
import { OpInputError } from '../../src/ops/errors';

describe('FrozenLake', () => {
  it('has gymnasium’s maps, sizes, ids and time limits', () => {
    expect(FROZEN_LAKE_MAPS['4x4']).toEqual(['SFFF', 'FHFH', 'FFFH', 'HFFG']);
    const small = createFrozenLake();
    expect([small.id, small.states, small.start, small.maxEpisodeSteps]).toEqual([
      'FrozenLake-4x4',
      16,
      0,
      100,
    ]);
    expect(small.layout()).toEqual(['S...', '.H.H', '...H', 'H..G']);
    const big = createFrozenLake({ map: '8x8' });
    expect([big.id, big.states, big.maxEpisodeSteps]).toEqual(['FrozenLake-8x8', 64, 200]);
    expect(big.layout()[7]).toBe('...H...G');
    const holes = [...Array(16).keys()].filter((s) => small.kindAt(s) === 'hole');
    expect(holes).toEqual([5, 7, 11, 12]);
    expect([...Array(16).keys()].filter((s) => small.isTerminal(s))).toEqual([5, 7, 11, 12, 15]);
  });

  it('slips as gymnasium lists it: (a−1) mod 4, a, (a+1) mod 4, 1/3 each', () => {
    const lake = createFrozenLake();
    // State 0 taking LEFT: UP (off the grid) → 0, LEFT (off the grid) → 0, DOWN → 4.
    const fromStart = lake.transitions(0, LEFT);
    expect(fromStart.map((t) => t.next)).toEqual([0, 0, 4]);
    for (const t of fromStart) {
      expect(t.probability).toBeCloseTo(1 / 3, 15);
      expect([t.reward, t.terminal]).toEqual([0, false]);
    }
    // State 14 = (3,2) taking RIGHT: DOWN (off the grid) → 14, RIGHT → 15 the goal (reward 1,
    // terminal), UP → 10.
    const nearGoal = lake.transitions(14, RIGHT);
    expect(nearGoal.map((t) => [t.next, t.reward, t.terminal])).toEqual([
      [14, 0, false],
      [15, 1, true],
      [10, 0, false],
    ]);
    // State 4 = (1,0) taking RIGHT: DOWN → 8, RIGHT → 5 a hole (reward 0, terminal), UP → 0.
    expect(lake.transitions(4, RIGHT).map((t) => [t.next, t.reward, t.terminal])).toEqual([
      [8, 0, false],
      [5, 0, true],
      [0, 0, false],
    ]);
    // Holes and the goal absorb (gymnasium: (1.0, s, 0, True)).
    expect(lake.transitions(15, UP)).toEqual([
      { probability: 1, next: 15, reward: 0, terminal: true },
    ]);
  });

  it('moves as intended without is_slippery and pays 1 only at the goal', () => {
    const lake = createFrozenLake({ isSlippery: false });
    expect(lake.id).toBe('FrozenLake-4x4-nonslippery');
    lake.reset(0);
    // 0 →↓ 4 →↓ 8 →→ 9 →↓ 13 →→ 14 →→ 15 (avoids the holes at 5, 12, 11).
    const path = [DOWN, DOWN, RIGHT, DOWN, RIGHT, RIGHT].map((a) => lake.step(a));
    expect(path.map((r) => r.obs)).toEqual([4, 8, 9, 13, 14, 15]);
    expect(path.map((r) => r.reward)).toEqual([0, 0, 0, 0, 0, 1]);
    expect(path.map((r) => r.terminated)).toEqual([false, false, false, false, false, true]);
  });

  it('truncates at 100 steps on the 4×4 map', () => {
    const lake = createFrozenLake({ isSlippery: false });
    lake.reset(0);
    for (let i = 1; i < 100; i++) expect(lake.step(LEFT).truncated).toBe(false);
    const last = lake.step(LEFT);
    expect([last.obs, last.terminated, last.truncated]).toEqual([0, false, true]);
  });

  it('slips 1/3 each way over seeded steps, and replays from a seed', () => {
    const lake = createFrozenLake({ seed: 5 });
    const counts = [0, 0, 0]; // from 0 taking DOWN: LEFT → 0, DOWN → 4, RIGHT → 1
    const n = 6000;
    const seen: number[] = [];
    lake.reset(11);
    for (let i = 0; i < n; i++) {
      const { obs } = lake.step(DOWN);
      seen.push(obs);
      counts[obs === 0 ? 0 : obs === 4 ? 1 : 2]! += 1;
      lake.reset();
    }
    for (const c of counts) expect(c / n).toBeCloseTo(1 / 3, 1);
    const again = createFrozenLake();
    again.reset(11);
    const replay: number[] = [];
    for (let i = 0; i < 50; i++) {
      replay.push(again.step(DOWN).obs);
      again.reset();
    }
    expect(replay).toEqual(seen.slice(0, 50));
  });

  it('takes a custom desc and refuses bad options', () => {
    const custom = createFrozenLake({ desc: ['SH', 'FG'], isSlippery: false });
    expect([custom.id, custom.states, custom.maxEpisodeSteps]).toEqual([
      'FrozenLake-2x2-nonslippery',
      4,
      100,
    ]);
    expect(() => createFrozenLake({ map: '5x5' as '4x4' })).toThrow(OpInputError);
    expect(() => createFrozenLake({ map: '5x5' as '4x4' })).toThrow("map must be '4x4' or '8x8'");
    expect(() => createFrozenLake({ desc: ['SX', 'FG'] })).toThrow("unknown cell 'X'");
    expect(() => createFrozenLake({ maxEpisodeSteps: -3 })).toThrow('maxEpisodeSteps');
  });
});
