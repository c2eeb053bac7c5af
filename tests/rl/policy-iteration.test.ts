import { describe, expect, it } from 'vitest';
import { createFrozenLake } from '../../src/envs/frozen-lake';
import { GridWorld } from '../../src/envs/gridworld';
import type { TabularModel, Transition } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';
import { createPolicyIteration } from '../../src/rl/policy-iteration';
import { createValueIteration } from '../../src/rl/value-iteration';

const go = (next: number, reward: number): Transition[] => [
  { probability: 1, next, reward, terminal: false },
];

/**
 * Two states, A = 0 and B = 1; action 0 "stay", action 1 "switch", γ = 0.5:
 *   A: stay → A, r = 0;  switch → B, r = 1;   B: stay → B, r = 2;  switch → A, r = 0.
 */
const twoState = (): TabularModel => {
  const table = [
    [go(0, 0), go(1, 1)],
    [go(1, 2), go(0, 0)],
  ];
  return {
    states: 2,
    actions: 2,
    transitions: (s, a) => table[s]![a]!,
    isTerminal: () => false,
  };
};

describe('policy iteration on a hand-worked 2-state MDP', () => {
  it('evaluates, improves, and is stable after the second round', async () => {
    const pi = createPolicyIteration(twoState(), { gamma: 0.5, theta: 1e-12 });
    // Round 1, π = (stay, stay). Evaluation: V(A) = 0 + 0.5·V(A) → 0; V(B) = 2 + 0.5·V(B) → 4.
    // Sweep k gives V(B) = 4 − 2^(2−k), Δ_k = 2^(2−k); Δ < 1e-12 first at k = 42 (2^−40 ≈ 9.1e-13).
    // Improvement: A: stay 0 + 0.5·0 = 0 < switch 1 + 0.5·4 = 3 → switch; B: stay 4 > switch 0.
    const m1 = await pi.update();
    expect(m1['values/eval_sweeps']).toBe(42);
    expect(pi.values()[0]).toBe(0);
    expect(pi.values()[1]).toBeCloseTo(4, 11);
    expect(Array.from(pi.policy())).toEqual([1, 0]);
    expect(m1['policy/changed_states']).toBe(1);
    expect(m1['policy/converged']).toBe(0);
    // Round 2, π = (switch, stay): V(A) = 1 + 0.5·4 = 3, V(B) = 4; no state improves.
    const m2 = await pi.update();
    expect(pi.values()[0]).toBeCloseTo(3, 11);
    expect(pi.values()[1]).toBeCloseTo(4, 11);
    expect(m2['policy/changed_states']).toBe(0);
    expect(m2['policy/converged']).toBe(1);
    // Stable: later rounds change nothing.
    const m3 = await pi.update();
    expect([m3['policy/converged'], m3['values/eval_sweeps']]).toEqual([1, 1]);
    expect(Array.from(pi.policy())).toEqual([1, 0]);
  });

  it('caps evaluation at maxEvalSweeps', async () => {
    const pi = createPolicyIteration(twoState(), { gamma: 0.5, theta: 1e-12, maxEvalSweeps: 1 });
    // One sweep of π = (stay, stay) from 0: V = (0, 2), Δ = 2. Improvement in A: 1 + 0.5·2 = 2 > 0.
    const m = await pi.update();
    expect(Array.from(pi.values())).toEqual([0, 2]);
    expect([m['values/eval_sweeps'], m['values/max_delta']]).toEqual([1, 2]);
    expect(pi.policy()[0]).toBe(1);
  });
});

async function solveBoth(model: TabularModel, gamma: number) {
  const vi = createValueIteration(model, { gamma, theta: 1e-12 });
  for (let i = 0; i < 10_000; i++) if ((await vi.update())['values/converged'] === 1) break;
  const pi = createPolicyIteration(model, { gamma, theta: 1e-12 });
  let rounds = 0;
  for (; rounds < 100; rounds++) if ((await pi.update())['policy/converged'] === 1) break;
  return { vi, pi, rounds };
}

describe('policy iteration agrees with value iteration', () => {
  it('on FrozenLake 4×4: the same optimal policy and values', async () => {
    const lake = createFrozenLake();
    const { vi, pi, rounds } = await solveBoth(lake, 0.99);
    expect(rounds).toBeLessThan(20); // policy iteration needs few rounds
    expect(Array.from(pi.policy())).toEqual(Array.from(vi.policy()));
    // The textbook policy: ← ↑ ↑ ↑ / ← H ← H / ↑ ↓ ← H / H → ↓ G (0 left, 1 down, 2 right, 3 up).
    expect(Array.from(pi.policy())).toEqual([0, 3, 3, 3, 0, 0, 0, 0, 3, 1, 0, 0, 0, 2, 1, 0]);
    const a = pi.values();
    const b = vi.values();
    for (let s = 0; s < 16; s++) expect(a[s]).toBeCloseTo(b[s]!, 8);
  });

  it('on a slippery GridWorld with a step cost, walls and a pit', async () => {
    const world = new GridWorld(['S..#.', '.#..G', '...#H', '.....'], {
      stepReward: -0.04,
      goalReward: 1,
      holeReward: -1,
      slip: 0.2,
    });
    const { vi, pi } = await solveBoth(world, 0.95);
    expect(Array.from(pi.policy())).toEqual(Array.from(vi.policy()));
    const a = pi.values();
    const b = vi.values();
    for (let s = 0; s < world.states; s++) expect(a[s]).toBeCloseTo(b[s]!, 8);
  });
});

describe('policy iteration config and edits', () => {
  it('re-plans after an edit and after a live γ change', async () => {
    const world = new GridWorld(['S..G', '....'], { stepReward: -1, goalReward: -1 });
    const pi = createPolicyIteration(world, { gamma: 1, theta: 1e-9, maxEvalSweeps: 200 });
    for (let i = 0; i < 20; i++) if ((await pi.update())['policy/converged'] === 1) break;
    expect(pi.values()[0]).toBeCloseTo(-3, 9);
    world.setWall(0, 2, true);
    let changed = 0;
    for (let i = 0; i < 20; i++) {
      const m = await pi.update();
      changed += m['policy/changed_states']!;
      if (m['policy/converged'] === 1) break;
    }
    expect(changed).toBeGreaterThan(0);
    expect(pi.values()[0]).toBeCloseTo(-5, 9); // around the wall: 5 steps
    pi.setHyperparams({ gamma: 0.5 });
    await pi.update();
    expect(pi.events.at(-1)).toMatchObject({ kind: 'hyperparams', changes: { gamma: 0.5 } });
  });

  it('refuses bad values with the field and range named', () => {
    const model = twoState();
    expect(() => createPolicyIteration(model, { maxEvalSweeps: 0 })).toThrow(OpInputError);
    expect(() => createPolicyIteration(model, { maxEvalSweeps: 2.5 })).toThrow(
      'policy-iteration: maxEvalSweeps must be an integer in [1, 1000000], got 2.5',
    );
    expect(() => createPolicyIteration(model, { gamma: -0.1 })).toThrow(
      'gamma must be a number in [0, 1], got -0.1',
    );
    const pi = createPolicyIteration(model);
    expect(() => pi.setHyperparams({ theta: 0 })).toThrow('theta must be a number in (0');
  });

  it('is deterministic: two runs give identical metrics and tables', async () => {
    const run = async () => {
      const pi = createPolicyIteration(createFrozenLake({ map: '8x8' }), { theta: 1e-6 });
      const metrics = [];
      for (let i = 0; i < 5; i++) metrics.push(await pi.update());
      return { metrics, policy: Array.from(pi.policy()), values: Array.from(pi.values()) };
    };
    expect(await run()).toEqual(await run());
  });
});
