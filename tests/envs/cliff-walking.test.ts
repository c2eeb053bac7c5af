import { describe, expect, it } from 'vitest';
import {
  CLIFF_DOWN,
  CLIFF_LEFT,
  CLIFF_RIGHT,
  CLIFF_UP,
  createCliffWalking,
} from '../../src/envs/cliff-walking';
import { gridText } from '../../src/envs/grid-text';

describe('CliffWalking', () => {
  it('is gymnasium’s 4×12 grid: start 36, goal 47, cliff 37…46', () => {
    const cliff = createCliffWalking();
    expect([cliff.id, cliff.rows, cliff.cols, cliff.states, cliff.start]).toEqual([
      'CliffWalking',
      4,
      12,
      48,
      36,
    ]);
    expect([...Array(48).keys()].filter((s) => cliff.kindAt(s) === 'cliff')).toEqual([
      37, 38, 39, 40, 41, 42, 43, 44, 45, 46,
    ]);
    expect(cliff.isTerminal(47)).toBe(true);
    expect(cliff.maxEpisodeSteps).toBeNull(); // gymnasium registers no time limit
  });

  it('uses gymnasium’s CliffWalking actions: 0 up, 1 right, 2 down, 3 left', () => {
    const cliff = createCliffWalking();
    // From 25 = (2,1): up → 13, right → 26, down → cliff 37 → start 36, left → 24.
    expect(cliff.transitions(25, CLIFF_UP)[0]).toEqual({
      probability: 1,
      next: 13,
      reward: -1,
      terminal: false,
    });
    expect(cliff.transitions(25, CLIFF_RIGHT)[0]!.next).toBe(26);
    expect(cliff.transitions(25, CLIFF_DOWN)[0]).toEqual({
      probability: 1,
      next: 36,
      reward: -100,
      terminal: false,
    });
    expect(cliff.transitions(25, CLIFF_LEFT)[0]!.next).toBe(24);
    expect(gridText(cliff, { policy: new Array<number>(48).fill(CLIFF_UP) }).split('\n')[0]).toBe(
      '↑↑↑↑↑↑↑↑↑↑↑↑',
    );
  });

  it('costs −1 a step, −100 and back to the start for the cliff, and ends at the goal', () => {
    const cliff = createCliffWalking();
    cliff.reset(0);
    // Into the cliff from the start: −100, back on 36, the episode goes on.
    expect(cliff.step(CLIFF_RIGHT)).toEqual({
      obs: 36,
      reward: -100,
      terminated: false,
      truncated: false,
      info: { prob: 1 },
    });
    // Off the grid to the left: stay, −1.
    expect(cliff.step(CLIFF_LEFT)).toMatchObject({ obs: 36, reward: -1 });
    // The optimal path: up, 11 × right, down = 13 steps, return −13.
    const actions = [CLIFF_UP, ...new Array<number>(11).fill(CLIFF_RIGHT), CLIFF_DOWN];
    cliff.reset();
    const results = actions.map((a) => cliff.step(a));
    expect(results.map((r) => r.obs)).toEqual([24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 47]);
    expect(results.reduce((sum, r) => sum + r.reward, 0)).toBe(-13);
    expect(results.at(-1)!.terminated).toBe(true);
  });

  it('has no time limit by default; an optional one truncates', () => {
    const free = createCliffWalking();
    free.reset();
    for (let i = 0; i < 1000; i++) expect(free.step(CLIFF_LEFT).truncated).toBe(false);
    const limited = createCliffWalking({ maxEpisodeSteps: 5 });
    limited.reset();
    const flags = Array.from({ length: 5 }, () => limited.step(CLIFF_LEFT).truncated);
    expect(flags).toEqual([false, false, false, false, true]);
  });
});
