import { describe, expect, it } from 'vitest';
import { GridWorld, LEFT, RIGHT, UP } from '../../src/envs/gridworld';
import type { TabularModel } from '../../src/envs/types';
import { withLivingReward } from '../../src/rl/living-reward';
import { createPolicyIteration } from '../../src/rl/policy-iteration';
import { ENVIRONMENTS } from '../../src/rl/registry';
import { createValueIteration, type PlanningTrainer } from '../../src/rl/value-iteration';

/** The registry's 4×3 world: rows ['...G', '.#.H', 'S...'], row 0 on top, state = row·4 + col. */
const fourByThree = () => ENVIRONMENTS['gridworld-4x3']() as GridWorld;
const at = (row: number, col: number) => row * 4 + col;

type Planner = PlanningTrainer<{ gamma: number; livingReward: number }>;
const PLANNERS: [string, (model: TabularModel, config: object) => Planner][] = [
  ['value iteration', (model, config) => createValueIteration(model, { theta: 1e-10, ...config })],
  [
    'policy iteration',
    (model, config) => createPolicyIteration(model, { theta: 1e-10, ...config }),
  ],
];

/** Updates until the planner says it has converged (value or policy). */
async function plan(planner: Planner, cap = 10_000): Promise<number> {
  for (let k = 1; k <= cap; k++) {
    const m = await planner.update();
    if (m['values/converged'] === 1 || m['policy/converged'] === 1) return k;
  }
  throw new Error('did not converge');
}

/**
 * AIMA (Russell & Norvig, 3rd ed.) Figure 17.3: utilities of the 4×3 world for R(s) = −0.04,
 * γ = 1, printed to 3 decimals. AIMA's U(s) counts R(s) of the state itself; our V(s) counts the
 * rewards of the steps ahead, so for a non-terminal state V(s) = U(s) − R(s) = U(s) + 0.04.
 */
const AIMA_UTILITIES: [row: number, col: number, u: number][] = [
  [0, 0, 0.812],
  [0, 1, 0.868],
  [0, 2, 0.918],
  [1, 0, 0.762],
  [1, 2, 0.66],
  [2, 0, 0.705],
  [2, 1, 0.655],
  [2, 2, 0.611],
  [2, 3, 0.388],
];

/** AIMA Figure 17.2(a): the optimal policy for R(s) = −0.04. */
const AIMA_POLICY: [row: number, col: number, action: number][] = [
  [0, 0, RIGHT],
  [0, 1, RIGHT],
  [0, 2, RIGHT],
  [1, 0, UP],
  [1, 2, UP],
  [2, 0, UP],
  [2, 1, LEFT],
  [2, 2, LEFT],
  [2, 3, LEFT],
];

describe('withLivingReward', () => {
  it('adds the living reward to non-terminal steps from cells the agent can be in, only', () => {
    const world = fourByThree();
    const living = withLivingReward(world, -0.04);
    // From (1,2) moving right: 0.8 into the −1 exit (terminal: unchanged), 0.1 up to (0,2) and
    // 0.1 down to (2,2) (floor: 0 − 0.04).
    const outcomes = living.transitions(at(1, 2), RIGHT);
    const byNext = new Map(outcomes.map((t) => [t.next, t]));
    expect(byNext.get(at(1, 3))).toMatchObject({ probability: 0.8, reward: -1, terminal: true });
    expect(byNext.get(at(0, 2))!.reward).toBeCloseTo(-0.04, 12);
    expect(byNext.get(at(2, 2))!.reward).toBeCloseTo(-0.04, 12);
    // A bump into the wall keeps the agent in place and still costs the living reward.
    expect(
      living.transitions(at(1, 0), RIGHT).find((t) => t.next === at(1, 0))!.reward,
    ).toBeCloseTo(-0.04, 12);
    // The wall's and the exits' self-loops stay at 0: their value stays 0.
    for (const s of [at(1, 1), at(0, 3), at(1, 3)]) {
      for (let a = 0; a < 4; a++) expect(living.transitions(s, a)[0]!.reward).toBe(0);
    }
    // The world itself is not changed, and 0 returns it as it is.
    expect(world.transitions(at(1, 2), RIGHT).find((t) => t.next === at(0, 2))!.reward).toBe(0);
    expect(withLivingReward(world, 0)).toBe(world);
  });
});

describe.each(PLANNERS)('%s with a living reward on the 4×3 world', (_name, create) => {
  it('reproduces AIMA Figure 17.3 (utilities) and 17.2(a) (policy) for R(s) = −0.04, γ = 1', async () => {
    const planner = create(fourByThree(), { gamma: 1, livingReward: -0.04 });
    await plan(planner);
    const values = planner.values();
    const policy = planner.policy();
    for (const [row, col, u] of AIMA_UTILITIES) {
      expect(Math.abs(values[at(row, col)]! - (u + 0.04)), `V(${row}, ${col})`).toBeLessThan(
        1.5e-3,
      );
    }
    for (const [row, col, action] of AIMA_POLICY) {
      expect(policy[at(row, col)], `π(${row}, ${col})`).toBe(action);
    }
    // The wall and the exits keep value 0.
    for (const s of [at(1, 1), at(0, 3), at(1, 3)]) expect(values[s]).toBe(0);
  });

  it('dives into the −1 exit from next to it when living costs more than the exit (−2)', async () => {
    const planner = create(fourByThree(), { gamma: 0.99, livingReward: -2 });
    await plan(planner);
    // AIMA Figure 17.2(b), R(s) < −1.6284: end the episode as fast as possible, −1 pit included.
    expect(planner.policy()[at(1, 2)]).toBe(RIGHT);
    expect(planner.policy()[at(2, 3)]).toBe(UP);
  });

  it('avoids both exits when living pays (+1): no greedy move can end the episode', async () => {
    const world = fourByThree();
    const planner = create(world, { gamma: 0.99, livingReward: 1 });
    await plan(planner);
    const policy = planner.policy();
    const values = planner.values();
    for (let s = 0; s < world.states; s++) {
      if (world.isTerminal(s) || !world.canOccupy(s)) continue;
      const endChance = world
        .transitions(s, policy[s]!)
        .filter((t) => t.terminal)
        .reduce((sum, t) => sum + t.probability, 0);
      expect(endChance, `π(${s}) = ${policy[s]}`).toBe(0);
      // Living forever at +1 a step is worth 1 / (1 − γ) = 100.
      expect(values[s]).toBeCloseTo(100, 4);
    }
  });

  it('re-plans when the living reward changes during the run', async () => {
    const planner = create(fourByThree(), { gamma: 0.99, livingReward: -0.04 });
    await plan(planner);
    expect(planner.policy()[at(1, 2)]).toBe(UP);
    planner.setHyperparams({ livingReward: -2 });
    const updates = await plan(planner);
    expect(updates).toBeGreaterThan(1);
    expect(planner.policy()[at(1, 2)]).toBe(RIGHT);
    // Back to 0: the world as built (undiscounted-ish, no cost of living).
    planner.setHyperparams({ livingReward: 0 });
    await plan(planner);
    expect(planner.values()[at(0, 2)]).toBeGreaterThan(0.9);
  });

  it('rejects a living reward out of [−5, 5], naming the field, and keeps planning', async () => {
    const planner = create(fourByThree(), { gamma: 0.99 });
    expect(() => planner.setHyperparams({ livingReward: 6 })).toThrow(/livingReward.*-5.*5/);
    expect(() => planner.setHyperparams({ livingReward: Number.NaN })).toThrow(/livingReward/);
    expect(() => create(fourByThree(), { livingReward: -7 })).toThrow(/livingReward/);
    await plan(planner);
    expect(planner.values().every(Number.isFinite)).toBe(true);
  });
});

describe('the 4×3 world', () => {
  it('is AIMA Figure 17.1: 0.8 as meant, 0.1 to each side, exits +1 and −1, one wall', () => {
    const world = fourByThree();
    expect(world.states).toBe(12);
    expect(world.kindAt(at(1, 1))).toBe('wall');
    expect(world.rewardAt(at(0, 3))).toBe(1);
    expect(world.rewardAt(at(1, 3))).toBe(-1);
    const up = world.transitions(at(2, 0), UP);
    const probability = (next: number) =>
      up.filter((t) => t.next === next).reduce((sum, t) => sum + t.probability, 0);
    expect(probability(at(1, 0))).toBeCloseTo(0.8, 12);
    expect(probability(at(2, 1))).toBeCloseTo(0.1, 12);
    expect(probability(at(2, 0))).toBeCloseTo(0.1, 12); // the left slip bumps the edge
  });
});
