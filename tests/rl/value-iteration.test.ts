import { describe, expect, it } from 'vitest';
import { createCliffWalking } from '../../src/envs/cliff-walking';
import { createFrozenLake } from '../../src/envs/frozen-lake';
import { GridWorld } from '../../src/envs/gridworld';
import type { TabularModel, Transition } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';
import {
  actionValue,
  argmaxWithTies,
  createValueIteration,
  DEFAULT_VALUE_ITERATION_CONFIG,
} from '../../src/rl/value-iteration';

/** A TabularModel from a table: table[s][a] = outcomes; `terminal` lists terminal states. */
function tableModel(table: Transition[][][], terminal: number[] = []): TabularModel {
  return {
    states: table.length,
    actions: table[0]!.length,
    transitions: (s, a) => table[s]![a]!,
    isTerminal: (s) => terminal.includes(s),
  };
}

/**
 * Two states, A = 0 and B = 1; action 0 "stay", action 1 "switch":
 *   A: stay → A, r = 0;   switch → B, r = 1
 *   B: stay → B, r = 2;   switch → A, r = 0
 * γ = 0.5. Optimal: stay in B forever, V(B) = 2 / (1 − 0.5) = 4; from A switch, V(A) = 1 + 0.5·4 = 3.
 */
const twoState = (): TabularModel =>
  tableModel([
    [
      [{ probability: 1, next: 0, reward: 0, terminal: false }],
      [{ probability: 1, next: 1, reward: 1, terminal: false }],
    ],
    [
      [{ probability: 1, next: 1, reward: 2, terminal: false }],
      [{ probability: 1, next: 0, reward: 0, terminal: false }],
    ],
  ]);

async function runToConvergence(
  trainer: ReturnType<typeof createValueIteration>,
  cap = 5000,
): Promise<number> {
  for (let k = 1; k <= cap; k++) {
    if ((await trainer.update())['values/converged'] === 1) return k;
  }
  throw new Error('did not converge');
}

describe('value iteration on a hand-worked 2-state MDP', () => {
  it('matches the sweeps by hand and stops changing once Δ < θ', async () => {
    const vi = createValueIteration(twoState(), { gamma: 0.5, theta: 0.1 });
    // Sweep k from V = 0:  V_k(A) = max(0.5·V(A), 1 + 0.5·V(B)),  V_k(B) = max(2 + 0.5·V(B), 0.5·V(A))
    //   k=1: A = max(0, 1) = 1,           B = max(2, 0) = 2,          Δ = 2
    //   k=2: A = max(0.5, 1 + 1) = 2,     B = max(2 + 1, 0.5) = 3,    Δ = 1
    //   k=3: A = 1 + 1.5 = 2.5,           B = 2 + 1.5 = 3.5,          Δ = 0.5
    // In general V_k(B) = 4 − 2^(2−k), V_k(A) = 3 − 2^(2−k), Δ_k = 2^(2−k): Δ_6 = 1/16 < θ = 0.1.
    const expected = [
      [1, 2, 2],
      [2, 3, 1],
      [2.5, 3.5, 0.5],
      [2.75, 3.75, 0.25],
      [2.875, 3.875, 0.125],
      [2.9375, 3.9375, 0.0625],
    ];
    for (const [k, [a, b, delta]] of expected.entries()) {
      const m = await vi.update();
      expect(Array.from(vi.values())).toEqual([a, b]);
      expect(m['values/max_delta']).toBe(delta);
      expect(m['values/converged']).toBe(k === 5 ? 1 : 0);
    }
    // Greedy: switch in A (1 + 0.5·3.9375 > 0.5·2.9375), stay in B.
    expect(Array.from(vi.policy())).toEqual([1, 0]);
    // Converged: further updates keep V as it is and keep reporting converged.
    for (let i = 0; i < 3; i++) {
      const m = await vi.update();
      expect(m['values/converged']).toBe(1);
      expect(m['policy/changed_states']).toBe(0);
      expect(Array.from(vi.values())).toEqual([2.9375, 3.9375]);
    }
    expect(vi.step).toBe(9);
  });

  it('converges to V(A) = 3, V(B) = 4 with a small θ, and Q = r + γV', async () => {
    const vi = createValueIteration(twoState(), { gamma: 0.5, theta: 1e-12 });
    await runToConvergence(vi);
    expect(vi.values()[0]).toBeCloseTo(3, 10);
    expect(vi.values()[1]).toBeCloseTo(4, 10);
    // Q(A, stay) = 0 + 0.5·3 = 1.5, Q(A, switch) = 1 + 0.5·4 = 3, Q(B, stay) = 4, Q(B, switch) = 1.5.
    const q = Array.from(vi.qValues());
    [1.5, 3, 4, 1.5].forEach((v, i) => expect(q[i]).toBeCloseTo(v, 10));
  });

  it('changes its greedy action as value flows back one step per sweep', async () => {
    // A chain with a shortcut, γ = 0.9; state 3 is terminal:
    //   0: action 0 → 1 (r = 0);  action 1 → 3 (r = 0.5, terminal)
    //   1: either action → 2 (r = 0);   2: either action → 3 (r = 1, terminal)
    // Sweep 1 (from V = 0): V = [max(0, 0.5), 0, 1] = [0.5, 0, 1];
    //   greedy in 0: Q(0,0) = 0.9·V(1) = 0 < 0.5 → take the shortcut, π(0) = 1.
    // Sweep 2: V = [max(0.9·0, 0.5), 0.9·1, 1] = [0.5, 0.9, 1];
    //   greedy in 0: Q(0,0) = 0.9·0.9 = 0.81 > 0.5 → π(0) = 0: the far reward has arrived.
    // Sweep 3: V = [0.81, 0.9, 1], Δ = 0.31; sweep 4: Δ = 0 → converged. V* = [0.81, 0.9, 1, 0].
    const step = (next: number, reward: number, terminal = false) => [
      { probability: 1, next, reward, terminal },
    ];
    const model = tableModel(
      [
        [step(1, 0), step(3, 0.5, true)],
        [step(2, 0), step(2, 0)],
        [step(3, 1, true), step(3, 1, true)],
        [step(3, 0, true), step(3, 0, true)],
      ],
      [3],
    );
    const vi = createValueIteration(model, { gamma: 0.9, theta: 1e-12 });
    const m1 = await vi.update();
    expect(Array.from(vi.values())).toEqual([0.5, 0, 1, 0]);
    expect(Array.from(vi.policy())).toEqual([1, 0, 0, 0]);
    expect(m1['policy/changed_states']).toBe(1); // from the initial all-0 policy
    const m2 = await vi.update();
    expect(vi.values()[1]).toBeCloseTo(0.9, 15);
    expect(vi.policy()[0]).toBe(0);
    expect(m2['policy/changed_states']).toBe(1);
    const m3 = await vi.update();
    expect(vi.values()[0]).toBeCloseTo(0.81, 15);
    expect(m3['values/max_delta']).toBeCloseTo(0.31, 15);
    expect(m3['values/converged']).toBe(0);
    const m4 = await vi.update();
    expect(m4['values/max_delta']).toBe(0);
    expect(m4['values/converged']).toBe(1);
  });
});

/** Solves (I − γ P_π) V = R_π exactly (Gaussian elimination, partial pivoting): V^π for π. */
function solvePolicy(model: TabularModel, policy: Int32Array, gamma: number): Float64Array {
  const n = model.states;
  const a = Array.from({ length: n }, () => new Float64Array(n + 1)); // [I − γP | R]
  for (let s = 0; s < n; s++) {
    a[s]![s] = 1;
    if (model.isTerminal(s)) continue;
    for (const t of model.transitions(s, policy[s]!)) {
      a[s]![n]! += t.probability * t.reward;
      if (!t.terminal) a[s]![t.next]! -= gamma * t.probability;
    }
  }
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(a[r]![c]!) > Math.abs(a[pivot]![c]!)) pivot = r;
    [a[c], a[pivot]] = [a[pivot]!, a[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = a[r]![c]! / a[c]![c]!;
      for (let k = c; k <= n; k++) a[r]![k]! -= f * a[c]![k]!;
    }
  }
  return Float64Array.from({ length: n }, (_, s) => a[s]![n]! / a[s]![s]!);
}

describe('value iteration on FrozenLake 4×4 (γ = 0.99)', () => {
  it('reaches the known optimal values and satisfies the Bellman optimality equation', async () => {
    const lake = createFrozenLake();
    const gamma = 0.99;
    const vi = createValueIteration(lake, { gamma, theta: 1e-12 });
    await runToConvergence(vi);
    const v = vi.values();
    // The optimal values of FrozenLake-v1 at γ = 0.99 as commonly published (4 decimals).
    const published = [
      0.542, 0.4988, 0.4707, 0.4569, 0.5585, 0, 0.3583, 0, 0.5918, 0.6431, 0.6152, 0, 0, 0.7417,
      0.8628, 0,
    ];
    published.forEach((value, s) => expect(v[s]).toBeCloseTo(value, 4));
    // Holes and the goal are terminal: 0.
    for (const s of [5, 7, 11, 12, 15]) expect(v[s]).toBe(0);
    // Goal-adjacent by hand: in 14 = (3,2) the greedy move is DOWN, whose outcomes are LEFT → 13,
    // DOWN → 14 (the edge), RIGHT → 15 (+1, terminal), 1/3 each:
    //   V14 = 1/3 · γV13 + 1/3 · γV14 + 1/3 · 1   ⇒   V14 = (1 + γ·V13) / (3 − γ).
    expect(vi.policy()[14]).toBe(1);
    expect(v[14]).toBeCloseTo((1 + gamma * v[13]!) / (3 - gamma), 10);
    // Closer to the goal is worth more along the bottom path.
    expect(v[14]).toBeGreaterThan(v[13]!);
    expect(v[13]).toBeGreaterThan(v[9]!);
    expect(v[14]).toBeGreaterThan(v[10]!);
    // Bellman optimality: V(s) = max_a Q(s, a) at every state.
    for (let s = 0; s < 16; s++) {
      if (lake.isTerminal(s)) continue;
      const q = [0, 1, 2, 3].map((a) => actionValue(lake, v, gamma, s, a));
      expect(v[s]).toBeCloseTo(Math.max(...q), 10);
    }
    // An independent method: V^π of the greedy π solved exactly as a linear system.
    const exact = solvePolicy(lake, vi.policy(), gamma);
    for (let s = 0; s < 16; s++) expect(v[s]).toBeCloseTo(exact[s]!, 9);
  });
});

describe('value iteration on CliffWalking (γ = 1)', () => {
  it('values each cell at minus its steps to the goal along the cliff edge', async () => {
    const cliff = createCliffWalking();
    const vi = createValueIteration(cliff, { gamma: 1, theta: 1e-9 });
    await runToConvergence(vi);
    const v = vi.values();
    // By hand: from the start, up + 11 × right + down = 13 steps of −1.
    expect(v[36]).toBe(-13);
    expect(v[24]).toBe(-12); // (2,0): 11 × right + down
    expect(v[35]).toBe(-1); // (2,11): down into the goal
    expect(v[0]).toBe(-14); // (0,0): 2 × down, 11 × right, down
    expect(v[47]).toBe(0);
    expect(vi.policy()[36]).toBe(0); // gymnasium CliffWalking action 0 = up
  });
});

describe('value iteration follows edits of the world', () => {
  it('resumes planning when a wall appears, and settles on the new values', async () => {
    // S . . G  with −1 per step: V(S) = −3 (3 steps: the last one pays the goal's −1).
    const world = new GridWorld(['S..G', '....'], { stepReward: -1, goalReward: -1 });
    const vi = createValueIteration(world, { gamma: 1, theta: 1e-9 });
    await runToConvergence(vi);
    expect(vi.values()[0]).toBe(-3);
    // A wall at (0,2) forces S → ↓ → → → ↑: 5 steps.
    world.setWall(0, 2, true);
    const m = await vi.update();
    expect(m['values/converged']).toBe(0);
    expect(m['values/max_delta']).toBeGreaterThanOrEqual(1);
    await runToConvergence(vi);
    expect(vi.values()[0]).toBe(-5);
    expect(vi.policy()[1]).toBe(1); // from (0,1): down, around the wall
  });
});

describe('value iteration config', () => {
  it('applies live changes at the next update and records them', async () => {
    const vi = createValueIteration(twoState(), { gamma: 0.5, theta: 1e-12 });
    await runToConvergence(vi);
    vi.setHyperparams({ gamma: 0.75 });
    expect(vi.config.gamma).toBe(0.5); // not yet
    const m = await vi.update();
    expect(vi.config.gamma).toBe(0.75);
    expect(m['values/converged']).toBe(0);
    expect(vi.events.at(-1)).toEqual({
      step: vi.step,
      kind: 'hyperparams',
      changes: { gamma: 0.75 },
    });
    await runToConvergence(vi);
    // γ = 0.75: V(B) = 2 / 0.25 = 8, V(A) = 1 + 0.75·8 = 7.
    expect(vi.values()[1]).toBeCloseTo(8, 9);
    expect(vi.values()[0]).toBeCloseTo(7, 9);
  });

  it('refuses bad values with the field and range named', () => {
    const model = twoState();
    expect(() => createValueIteration(model, { gamma: 1.5 })).toThrow(OpInputError);
    expect(() => createValueIteration(model, { gamma: 1.5 })).toThrow(
      'value-iteration: gamma must be a number in [0, 1], got 1.5',
    );
    expect(() => createValueIteration(model, { theta: 0 })).toThrow(
      'theta must be a number in (0, 1000000], got 0',
    );
    const vi = createValueIteration(model);
    expect(() => vi.setHyperparams({ theta: -1 })).toThrow('theta must be a number in (0');
    expect(() => vi.setHyperparams({ lr: 1 } as never)).toThrow('lr is not a setting of');
    expect(vi.config).toEqual(DEFAULT_VALUE_ITERATION_CONFIG);
  });

  it('is deterministic: two runs give identical metrics and tables', async () => {
    const run = async () => {
      const vi = createValueIteration(createFrozenLake({ map: '8x8' }), { theta: 1e-6 });
      const metrics = [];
      for (let i = 0; i < 30; i++) metrics.push(await vi.update());
      return { metrics, values: Array.from(vi.values()) };
    };
    expect(await run()).toEqual(await run());
  });

  it('breaks ties toward the lowest action, ignoring rounding', () => {
    expect(argmaxWithTies([0.3, 0.1 + 0.2, 0.2])).toBe(0);
    expect(argmaxWithTies([0.1, 0.5, 0.5])).toBe(1);
    expect(argmaxWithTies([-2, -1, -3])).toBe(1);
  });
});
