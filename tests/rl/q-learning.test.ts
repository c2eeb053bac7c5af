import { describe, expect, it } from 'vitest';
import {
  CLIFF_DOWN,
  CLIFF_RIGHT,
  CLIFF_UP,
  createCliffWalking,
} from '../../src/envs/cliff-walking';
import { createFrozenLake } from '../../src/envs/frozen-lake';
import type { Env, StepResult } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';
import { createQLearning } from '../../src/rl/q-learning';
import { epsilonGreedy } from '../../src/rl/td-control';
import { seededRandom } from '../../src/util/random';

type Outcome = Omit<StepResult<number>, 'info'>;

/** A scripted env with one action: in state s, step() returns script[s]. */
function scripted(states: number, script: Outcome[]): Env<number, number> {
  let state = 0;
  return {
    id: 'scripted',
    observationSpace: { kind: 'discrete', n: states },
    actionSpace: { kind: 'discrete', n: 1 },
    reset: () => {
      state = 0;
      return { obs: 0, info: {} };
    },
    step: () => {
      const outcome = script[state]!;
      state = outcome.obs;
      return { ...outcome, info: {} };
    },
  };
}

/** 0 → 1 (r = 0), 1 → end (r = 1, terminal). */
const chain = () =>
  scripted(3, [
    { obs: 1, reward: 0, terminated: false, truncated: false },
    { obs: 2, reward: 1, terminated: true, truncated: false },
  ]);

describe('Q-learning, hand-worked', () => {
  it('backs a terminal reward up a 2-step chain (α = 0.5, γ = 0.9)', async () => {
    const agent = createQLearning(chain(), { alpha: 0.5, gamma: 0.9, epsilon: 0 });
    // Q(s) ← Q(s) + 0.5 · (target − Q(s)); target = r + 0.9·Q(s') before the end, r at the end.
    //   episode 1: Q0 = 0 + 0.5·(0 + 0.9·0 − 0) = 0;          Q1 = 0 + 0.5·(1 − 0) = 0.5
    //   episode 2: Q0 = 0 + 0.5·(0.9·0.5 − 0) = 0.225;        Q1 = 0.5 + 0.5·0.5 = 0.75
    //   episode 3: Q0 = 0.225 + 0.5·(0.675 − 0.225) = 0.45;   Q1 = 0.75 + 0.5·0.25 = 0.875
    const expected = [
      [0, 0.5],
      [0.225, 0.75],
      [0.45, 0.875],
    ];
    let tdError = NaN;
    for (const [q0, q1] of expected) {
      const m = await agent.update();
      tdError = m['losses/td_error']!;
      expect(m['charts/episodic_return']).toBe(1);
      expect(m['charts/episodic_length']).toBe(2);
      const q = agent.qValues();
      expect(q[0]).toBeCloseTo(q0!, 15);
      expect(q[1]).toBeCloseTo(q1!, 15);
    }
    // |δ| in episode 3: |0.675 − 0.225| = 0.45 and |1 − 0.75| = 0.25 → mean 0.35.
    expect(tdError).toBeCloseTo(0.35, 15);
  });

  it('bootstraps through a truncation but not through a termination', async () => {
    // One state looping to itself with r = 1, α = 0.5, γ = 0.9, each episode one step.
    //   truncated:  Q = 0.5·(1 + 0) = 0.5, then 0.5 + 0.5·(1 + 0.45 − 0.5) = 0.975
    //   terminated: Q = 0.5, then 0.5 + 0.5·(1 − 0.5) = 0.75
    const loop = (terminated: boolean) =>
      scripted(1, [{ obs: 0, reward: 1, terminated, truncated: !terminated }]);
    for (const [terminated, second] of [
      [false, 0.975],
      [true, 0.75],
    ] as const) {
      const agent = createQLearning(loop(terminated), { alpha: 0.5, gamma: 0.9 });
      await agent.update();
      expect(agent.qValues()[0]).toBeCloseTo(0.5, 15);
      await agent.update();
      expect(agent.qValues()[0]).toBeCloseTo(second, 15);
    }
  });

  it('decays ε linearly over epsilonDecayEpisodes, then holds epsilonEnd', async () => {
    const agent = createQLearning(chain(), {
      epsilon: 1,
      epsilonEnd: 0.1,
      epsilonDecayEpisodes: 9,
    });
    // ε_k = 1 + (0.1 − 1)·min(1, k/9): 1, 0.9, 0.8, …, 0.1, 0.1, 0.1
    const seen: number[] = [];
    for (let k = 0; k < 12; k++) seen.push((await agent.update())['charts/epsilon']!);
    const expected = [1, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.1, 0.1];
    expected.forEach((e, k) => expect(seen[k]).toBeCloseTo(e, 12));
  });

  it('caps an endless episode at maxEpisodeSteps and starts the next one fresh', async () => {
    const endless = scripted(1, [{ obs: 0, reward: -1, terminated: false, truncated: false }]);
    const agent = createQLearning(endless, { maxEpisodeSteps: 5 });
    for (let i = 0; i < 2; i++) {
      const m = await agent.update();
      expect([m['charts/episodic_length'], m['charts/episodic_return']]).toEqual([5, -5]);
    }
  });
});

describe('ε-greedy', () => {
  it('breaks greedy ties at random and explores uniformly with probability ε', () => {
    // Row of state 0: Q = [1, 3, 3, 0] — actions 1 and 2 tie for the max.
    const q = new Float64Array([1, 3, 3, 0]);
    const random = seededRandom(9);
    const greedy = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) greedy[epsilonGreedy(q, 0, 4, 0, random)]! += 1;
    expect(greedy[0]).toBe(0);
    expect(greedy[3]).toBe(0);
    expect(greedy[1]! / 4000).toBeCloseTo(0.5, 1);
    const explore = [0, 0, 0, 0];
    for (let i = 0; i < 8000; i++) explore[epsilonGreedy(q, 0, 4, 1, random)]! += 1;
    for (const c of explore) expect(c / 8000).toBeCloseTo(0.25, 1);
  });
});

/** Follows the greedy policy from the start of a fresh CliffWalking; returns the visited cells. */
function greedyWalk(policy: Int32Array): { path: number[]; ret: number } {
  const env = createCliffWalking({ maxEpisodeSteps: 100 });
  let state = env.reset(0).obs;
  const path = [state];
  let ret = 0;
  for (;;) {
    const r = env.step(policy[state]!);
    ret += r.reward;
    state = r.obs;
    path.push(state);
    if (r.terminated || r.truncated) return { path, ret };
  }
}

describe('Q-learning on CliffWalking (Sutton & Barto Example 6.6: ε = 0.1, α = 0.5, γ = 1)', () => {
  it('learns the optimal edge path: 13 steps, return −13', async () => {
    const agent = createQLearning(createCliffWalking(), { alpha: 0.5, epsilon: 0.1, gamma: 1 }, 1);
    const returns: number[] = [];
    for (let e = 0; e < 500; e++) returns.push((await agent.update())['charts/episodic_return']!);
    const { path, ret } = greedyWalk(agent.policy());
    // Up from the start, along row 2 beside the cliff, down into the goal.
    expect(path).toEqual([36, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 47]);
    expect(ret).toBe(-13);
    expect(agent.policy()[36]).toBe(CLIFF_UP);
    expect(agent.policy()[30]).toBe(CLIFF_RIGHT);
    expect(agent.policy()[35]).toBe(CLIFF_DOWN);
    // Improvement: the first 20 episodes wander (hundreds of steps); the last 100 are far better.
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(returns.slice(0, 20))).toBeLessThan(-150);
    expect(mean(returns.slice(-100))).toBeGreaterThan(-80);
  });
});

describe('Q-learning runs', () => {
  it('is deterministic: same seed, same metrics and table; another seed differs', async () => {
    const run = async (seed: number) => {
      const agent = createQLearning(createFrozenLake(), { alpha: 0.2, epsilon: 0.3 }, seed);
      const metrics = [];
      for (let i = 0; i < 60; i++) metrics.push(await agent.update());
      return { metrics, q: Array.from(agent.qValues()) };
    };
    const a = await run(4);
    expect(await run(4)).toEqual(a);
    expect((await run(5)).metrics).not.toEqual(a.metrics);
  });

  it('applies live changes at the next episode and records them', async () => {
    const agent = createQLearning(chain(), { epsilon: 0.3 });
    await agent.update();
    agent.setHyperparams({ epsilon: 0, alpha: 0.25 });
    const m = await agent.update();
    expect(m['charts/epsilon']).toBe(0);
    expect(agent.config.alpha).toBe(0.25);
    expect(agent.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { epsilon: 0, alpha: 0.25 } },
    ]);
  });

  it('refuses bad values and non-tabular envs with the field and range named', () => {
    expect(() => createQLearning(chain(), { alpha: 0 })).toThrow(OpInputError);
    expect(() => createQLearning(chain(), { alpha: 0 })).toThrow(
      'q-learning: alpha must be a number in (0, 1], got 0',
    );
    expect(() => createQLearning(chain(), { epsilon: 1.2 })).toThrow(
      'epsilon must be a number in [0, 1], got 1.2',
    );
    expect(() => createQLearning(chain(), { epsilonDecayEpisodes: -1 })).toThrow(
      'epsilonDecayEpisodes must be an integer in [0, 1000000000], got -1',
    );
    const box: Env<number, number> = {
      ...chain(),
      observationSpace: { kind: 'box', shape: [2], low: [0, 0], high: [1, 1] },
    };
    expect(() => createQLearning(chain(), {}, -1)).toThrow(
      'seed must be an integer in [0, 4294967295], got -1',
    );
    expect(() => createQLearning(box)).toThrow('env must have discrete observation and action');
    const agent = createQLearning(chain());
    expect(() => agent.setHyperparams({ initialQ: 1 })).toThrow(
      'initialQ cannot change while the run trains',
    );
    expect(() => agent.setHyperparams({ gamma: 2 })).toThrow('gamma must be a number in [0, 1]');
  });
});
