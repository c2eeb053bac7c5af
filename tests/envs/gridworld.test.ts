import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gridText, valuesText } from '../../src/envs/grid-text';
import { DOWN, GridWorld, LEFT, RIGHT, UP } from '../../src/envs/gridworld';
import { EnvError } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';

/**
 *   S . .      states 0 1 2
 *   . # G             3 4 5      (4 is a wall, 5 the goal)
 */
const SMALL = ['S..', '.#G'];

describe('GridWorld layout', () => {
  it('parses rows into cells, spaces and a start', () => {
    const world = new GridWorld(SMALL);
    expect(world.id).toBe('GridWorld-2x3');
    expect([world.rows, world.cols, world.states, world.actions]).toEqual([2, 3, 6, 4]);
    expect(world.observationSpace).toEqual({ kind: 'discrete', n: 6 });
    expect(world.actionSpace).toEqual({ kind: 'discrete', n: 4 });
    expect(world.start).toBe(0);
    expect([0, 1, 2, 3, 4, 5].map((s) => world.kindAt(s))).toEqual([
      'floor',
      'floor',
      'floor',
      'floor',
      'wall',
      'goal',
    ]);
    expect(world.layout()).toEqual(SMALL);
    expect(world.stateOf(1, 2)).toBe(5);
    expect(world.cellOf(5)).toEqual({ row: 1, col: 2 });
    // 'F' is floor too (gymnasium's letter), printed back as '.'.
    expect(new GridWorld(['SFH', 'CFG']).layout()).toEqual(['S.H', 'C.G']);
  });

  it('marks goals and holes terminal, nothing else', () => {
    const world = new GridWorld(['S.#', 'CHG']);
    expect([0, 1, 2, 3, 4, 5].map((s) => world.isTerminal(s))).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });
});

describe('GridWorld transitions (hand-worked on S.. / .#G)', () => {
  it('moves deterministically without slip; walls and edges leave the agent in place', () => {
    const world = new GridWorld(SMALL, { stepReward: -1, goalReward: 10 });
    const only = (s: number, a: number) => {
      const ts = world.transitions(s, a);
      expect(ts).toHaveLength(1);
      return ts[0]!;
    };
    expect(only(0, RIGHT)).toEqual({ probability: 1, next: 1, reward: -1, terminal: false });
    expect(only(0, DOWN)).toEqual({ probability: 1, next: 3, reward: -1, terminal: false });
    // Off the top edge and off the left edge: stay in 0, pay the step reward.
    expect(only(0, UP)).toEqual({ probability: 1, next: 0, reward: -1, terminal: false });
    expect(only(0, LEFT)).toEqual({ probability: 1, next: 0, reward: -1, terminal: false });
    // Into the wall at 4 from 3 (right) and from 1 (down): stay.
    expect(only(3, RIGHT).next).toBe(3);
    expect(only(1, DOWN).next).toBe(1);
    // 2 → down → 5 is the goal: reward 10, terminal.
    expect(only(2, DOWN)).toEqual({ probability: 1, next: 5, reward: 10, terminal: true });
  });

  it('slips to the perpendicular directions, slip/2 each, in gymnasium order', () => {
    // slip 0.2, from 1 = (0,1) taking DOWN: outcomes (DOWN−1) = LEFT → 0 with 0.1;
    // DOWN → wall 4 → stays in 1 with 0.8; (DOWN+1) = RIGHT → 2 with 0.1.
    const world = new GridWorld(SMALL, { slip: 0.2 });
    const ts = world.transitions(1, DOWN);
    expect(ts.map((t) => t.next)).toEqual([0, 1, 2]);
    expect(ts[0]!.probability).toBeCloseTo(0.1, 15);
    expect(ts[1]!.probability).toBeCloseTo(0.8, 15);
    expect(ts[2]!.probability).toBeCloseTo(0.1, 15);
  });

  it('slip probabilities sum to 1 for every state and action', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1, noNaN: true }), (slip) => {
        const world = new GridWorld(['S.#H', '.C.G', '....'], { slip });
        for (let s = 0; s < world.states; s++) {
          for (let a = 0; a < 4; a++) {
            const ts = world.transitions(s, a);
            const total = ts.reduce((sum, t) => sum + t.probability, 0);
            expect(total).toBeCloseTo(1, 12);
            for (const t of ts) expect(t.probability).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: 30 },
    );
  });

  it('pays the landed cell’s reward: per-cell rewards replace the step reward', () => {
    const world = new GridWorld(SMALL, {
      stepReward: -0.5,
      cellRewards: [{ row: 0, col: 1, reward: 3 }],
    });
    expect(world.transitions(0, RIGHT)[0]!.reward).toBe(3);
    // A bump in cell 1 lands in cell 1 again: it pays 3 again.
    expect(world.transitions(1, UP)[0]).toEqual({
      probability: 1,
      next: 1,
      reward: 3,
      terminal: false,
    });
    world.setReward(0, 1, null);
    expect(world.transitions(0, RIGHT)[0]!.reward).toBe(-0.5);
    world.setStepReward(-2);
    expect(world.rewardAt(1)).toBe(-2);
    expect(world.rewardAt(5)).toBe(1); // the goal keeps its own default
  });

  it('sends a cliff step back to the start with the cliff reward, not terminal', () => {
    const world = new GridWorld(['...', 'SCG'], { stepReward: -1, cliffReward: -100 });
    expect(world.transitions(3, RIGHT)).toEqual([
      { probability: 1, next: 3, reward: -100, terminal: false },
    ]);
    // From 1 = (0,1) down into the cliff at 4: back to the start 3.
    expect(world.transitions(1, DOWN)).toEqual([
      { probability: 1, next: 3, reward: -100, terminal: false },
    ]);
    expect(world.transitions(0, DOWN)[0]!.reward).toBe(-1); // onto the start: a plain step
  });

  it('makes terminal, wall and cliff cells absorb with reward 0 in the model', () => {
    const world = new GridWorld(['S#', 'CG']);
    for (let a = 0; a < 4; a++) {
      expect(world.transitions(1, a)).toEqual([
        { probability: 1, next: 1, reward: 0, terminal: false },
      ]);
      expect(world.transitions(2, a)).toEqual([
        { probability: 1, next: 2, reward: 0, terminal: false },
      ]);
      expect(world.transitions(3, a)).toEqual([
        { probability: 1, next: 3, reward: 0, terminal: true },
      ]);
    }
  });

  it('remaps actions to directions', () => {
    const world = new GridWorld(['S.', '..'], { actionDirections: [UP, RIGHT, DOWN, LEFT] });
    expect(world.transitions(0, 1)[0]!.next).toBe(1); // action 1 = right
    expect(world.transitions(0, 2)[0]!.next).toBe(2); // action 2 = down
  });
});

describe('GridWorld edits', () => {
  it('changes transitions at once when a wall is added or removed', () => {
    const world = new GridWorld(SMALL);
    expect(world.transitions(0, RIGHT)[0]!.next).toBe(1);
    const version = world.version;
    world.setWall(0, 1, true);
    expect(world.version).toBe(version + 1);
    expect(world.transitions(0, RIGHT)[0]!.next).toBe(0);
    expect(world.layout()).toEqual(['S#.', '.#G']);
    world.setWall(1, 1, false);
    expect(world.transitions(3, RIGHT)[0]!.next).toBe(4);
    expect(world.layout()).toEqual(['S#.', '..G']);
  });

  it('paints goals, holes and cliffs, moves the start and changes slip', () => {
    const world = new GridWorld(SMALL, { holeReward: -5 });
    world.setCell(0, 2, 'hole');
    expect(world.transitions(1, RIGHT)[0]).toEqual({
      probability: 1,
      next: 2,
      reward: -5,
      terminal: true,
    });
    world.setStart(1, 0);
    expect(world.reset().obs).toBe(3);
    expect(world.layout()).toEqual(['..H', 'S#G']);
    world.setSlip(0.5);
    expect(world.transitions(3, UP)).toHaveLength(3);
    world.setSlip(0);
    expect(world.transitions(3, UP)).toHaveLength(1);
  });

  it('refuses edits that would strand the start or the agent', () => {
    const world = new GridWorld(SMALL);
    expect(() => world.setWall(0, 0, true)).toThrow(/is the start; move the start first/);
    expect(() => world.setStart(1, 1)).toThrow(/start must be a floor cell/);
    world.reset(0);
    world.step(RIGHT); // the agent is in 1
    expect(() => world.setCell(0, 1, 'hole')).toThrow(/holds the agent mid-episode/);
    world.setWall(1, 0, true); // elsewhere is fine
  });
});

describe('GridWorld episodes', () => {
  it('runs S → right → right → down to the goal, then refuses to step', () => {
    const world = new GridWorld(SMALL, { stepReward: -1 });
    expect(world.reset(1)).toEqual({ obs: 0, info: { prob: 1 } });
    const rewards: number[] = [];
    for (const a of [RIGHT, RIGHT]) {
      const r = world.step(a);
      expect(r.terminated).toBe(false);
      rewards.push(r.reward);
    }
    const last = world.step(DOWN);
    expect(last).toEqual({
      obs: 5,
      reward: 1,
      terminated: true,
      truncated: false,
      info: { prob: 1 },
    });
    expect(rewards).toEqual([-1, -1]);
    expect(() => world.step(LEFT)).toThrow(EnvError);
    expect(() => world.step(LEFT)).toThrow('GridWorld-2x3, step 3: the episode has ended');
    expect(world.reset().obs).toBe(0);
  });

  it('truncates at the time limit (both flags when the last step also terminates)', () => {
    const world = new GridWorld(SMALL, { maxEpisodeSteps: 3 });
    world.reset();
    expect(world.step(UP).truncated).toBe(false);
    expect(world.step(UP).truncated).toBe(false);
    const third = world.step(UP);
    expect([third.terminated, third.truncated]).toEqual([false, true]);
    expect(() => world.step(UP)).toThrow(EnvError);
    world.reset();
    world.step(RIGHT);
    world.step(RIGHT);
    const end = world.step(DOWN);
    expect([end.terminated, end.truncated]).toEqual([true, true]);
    // No limit: 500 bumps stay untruncated.
    const free = new GridWorld(SMALL, { maxEpisodeSteps: null });
    free.reset();
    for (let i = 0; i < 500; i++) expect(free.step(UP).truncated).toBe(false);
  });

  it('replays exactly from a seed; reset() without a seed continues the stream', () => {
    const actions = Array.from({ length: 40 }, (_, i) => (i * 7) % 4);
    const play = (world: GridWorld, seed?: number): number[] => {
      const out = [world.reset(seed).obs];
      for (const a of actions) {
        const r = world.step(a);
        out.push(r.obs);
        if (r.terminated || r.truncated) out.push(world.reset().obs);
      }
      return out;
    };
    const open = ['S...', '....', '....'];
    const a = new GridWorld(open, { slip: 0.6 });
    const b = new GridWorld(open, { slip: 0.6 });
    const first = play(a, 42);
    expect(play(b, 42)).toEqual(first);
    expect(play(a, 42)).toEqual(first);
    expect(play(b)).not.toEqual(first); // continues, does not restart
    expect(play(new GridWorld(open, { slip: 0.6 }), 43)).not.toEqual(first);
  });

  it('slips with the model’s frequencies over seeded steps', () => {
    // From 4 = (1,1) of an open 3×3, taking RIGHT with slip 0.5: UP → 1 (0.25), RIGHT → 5 (0.5),
    // DOWN → 7 (0.25).
    const world = new GridWorld(['S..', '...', '...'], { slip: 0.5, maxEpisodeSteps: null });
    world.setStart(1, 1);
    const counts = new Map<number, number>();
    world.reset(7);
    const n = 8000;
    for (let i = 0; i < n; i++) {
      const { obs } = world.step(RIGHT);
      counts.set(obs, (counts.get(obs) ?? 0) + 1);
      world.reset();
    }
    expect((counts.get(1) ?? 0) / n).toBeCloseTo(0.25, 1);
    expect((counts.get(5) ?? 0) / n).toBeCloseTo(0.5, 1);
    expect((counts.get(7) ?? 0) / n).toBeCloseTo(0.25, 1);
  });
});

describe('GridWorld bad input', () => {
  const layouts: [string, readonly string[], RegExp][] = [
    ['no rows', [], /layout must be a non-empty array/],
    ['ragged rows', ['S..', '..'], /row 1 must have 3 cells like row 0, got 2/],
    ['an unknown cell', ['S.x'], /row 0, col 2: unknown cell 'x'/],
    ['no start', ['...'], /has no start cell 'S'/],
    ['two starts', ['S.S'], /second start 'S' at row 0, col 2/],
    ['too many rows', Array.from({ length: 65 }, (_, i) => (i ? '.' : 'S')), /layout rows/],
  ];
  it.each(layouts)('refuses a layout with %s', (_, layout, message) => {
    expect(() => new GridWorld(layout)).toThrow(OpInputError);
    expect(() => new GridWorld(layout)).toThrow(message);
  });

  it('refuses bad options with the field and range named', () => {
    expect(() => new GridWorld(SMALL, { slip: 1.5 })).toThrow('slip must be in [0, 1], got 1.5');
    expect(() => new GridWorld(SMALL, { maxEpisodeSteps: 0 })).toThrow(
      'maxEpisodeSteps must be an integer in [1, 2147483647], got 0',
    );
    expect(() => new GridWorld(SMALL, { stepReward: NaN })).toThrow('stepReward must be in');
    expect(() => new GridWorld(SMALL, { actionDirections: [0, 0, 1, 2] })).toThrow(
      'actionDirections must be a permutation of [0, 1, 2, 3]',
    );
    expect(() => new GridWorld(SMALL, { cellRewards: [{ row: 2, col: 0, reward: 1 }] })).toThrow(
      'row must be an integer in [0, 1], got 2',
    );
  });

  it('refuses cells off the grid, bad kinds and bad model queries', () => {
    const world = new GridWorld(SMALL);
    expect(() => world.setWall(0, 3, true)).toThrow('col must be an integer in [0, 2], got 3');
    expect(() => world.setCell(0, 1, 'lava' as 'wall')).toThrow("kind must be one of 'floor'");
    expect(() => world.transitions(6, 0)).toThrow('state must be an integer in [0, 5], got 6');
    expect(() => world.transitions(0, 4)).toThrow('action must be an integer in [0, 3], got 4');
    expect(() => world.setSlip(-0.1)).toThrow('slip must be in [0, 1], got -0.1');
  });

  it('refuses misuse of step and reset with the env and step named', () => {
    const world = new GridWorld(SMALL);
    expect(() => world.step(0)).toThrow('GridWorld-2x3, step 0: step() before reset()');
    world.reset();
    world.step(RIGHT);
    expect(() => world.step(4)).toThrow('step 1: action must be an integer in [0, 3], got 4');
    expect(() => world.step(1.5)).toThrow(EnvError);
    expect(() => world.reset(-1)).toThrow('seed must be an integer');
  });
});

describe('grid text', () => {
  it('draws policies as arrows, paths as stars and values as a table', () => {
    const world = new GridWorld(SMALL);
    // π: 0 → right, 1 → right, 2 → down, 3 → up; 4 (wall) and 5 (goal) keep their letters.
    const policy = [RIGHT, RIGHT, DOWN, UP, 0, 0];
    expect(gridText(world, { policy })).toBe('→→↓\n↑#G');
    expect(gridText(world, { path: [0, 1, 2, 5], agent: 2 })).toBe('**@\n.#G');
    expect(valuesText(world, [0.5, 0.25, 1, -1, 0, 0], 2)).toBe(
      ' 0.50  0.25  1.00\n-1.00     #  0.00',
    );
  });
});
