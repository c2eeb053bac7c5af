import { describe, expect, it } from 'vitest';
import { createCliffWalking } from '../../src/envs/cliff-walking';
import { gridText } from '../../src/envs/grid-text';
import { createFrozenLake } from '../../src/envs/frozen-lake';
import type { Env, StepResult } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';
import { createQLearning } from '../../src/rl/q-learning';
import { createSarsa } from '../../src/rl/sarsa';

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

describe('SARSA, hand-worked', () => {
  it('backs a terminal reward up a 2-step chain (α = 0.5, γ = 0.9)', async () => {
    // One action, so a' is forced and SARSA's target r + γ·Q(s', a') equals Q-learning's:
    //   episode 1: Q0 = 0, Q1 = 0.5;  episode 2: Q0 = 0.225, Q1 = 0.75;  episode 3: Q0 = 0.45, Q1 = 0.875
    const env = scripted(3, [
      { obs: 1, reward: 0, terminated: false, truncated: false },
      { obs: 2, reward: 1, terminated: true, truncated: false },
    ]);
    const agent = createSarsa(env, { alpha: 0.5, gamma: 0.9 });
    for (const [q0, q1] of [
      [0, 0.5],
      [0.225, 0.75],
      [0.45, 0.875],
    ]) {
      await agent.update();
      expect(agent.qValues()[0]).toBeCloseTo(q0!, 15);
      expect(agent.qValues()[1]).toBeCloseTo(q1!, 15);
    }
  });

  it('bootstraps with Q(s′, a′) at a truncation, not at a termination', async () => {
    // One state looping to itself with r = 1, α = 0.5, γ = 0.9:
    //   truncated:  0.5, then 0.5 + 0.5·(1 + 0.9·0.5 − 0.5) = 0.975;  terminated: 0.5, then 0.75
    for (const [terminated, second] of [
      [false, 0.975],
      [true, 0.75],
    ] as const) {
      const env = scripted(1, [{ obs: 0, reward: 1, terminated, truncated: !terminated }]);
      const agent = createSarsa(env, { alpha: 0.5, gamma: 0.9 });
      await agent.update();
      await agent.update();
      expect(agent.qValues()[0]).toBeCloseTo(second, 15);
    }
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

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('SARSA vs Q-learning on CliffWalking (Sutton & Barto Example 6.6)', () => {
  const config = { alpha: 0.5, epsilon: 0.1, gamma: 1 };

  it.each([0, 1, 2])(
    'seed %i: SARSA’s greedy path keeps away from the cliff edge',
    async (seed) => {
      const agent = createSarsa(createCliffWalking(), config, seed);
      for (let e = 0; e < 1000; e++) await agent.update();
      const { path, ret } = greedyWalk(agent.policy());
      const walk = gridText(createCliffWalking(), { path });
      expect(path.at(-1), walk).toBe(47); // reaches the goal…
      expect(path.length - 1, walk).toBeGreaterThan(13); // …by a longer road than the edge
      expect(ret, walk).toBeGreaterThan(-30);
      // The edge row is row 2 (states 24…35): only its two ends, beside start and goal, are used.
      const onEdge = path.filter((s) => s >= 25 && s <= 34);
      expect(onEdge, walk).toEqual([]);
    },
  );

  it('earns more online than Q-learning while exploring (ε-greedy returns)', async () => {
    // The figure of Example 6.6: with ε = 0.1 exploration, Q-learning walks the edge and falls
    // now and then (about −50 per episode); SARSA walks the safe road (about −25).
    const online = async (make: typeof createSarsa) => {
      const agent = make(createCliffWalking(), config, 1);
      const returns: number[] = [];
      for (let e = 0; e < 500; e++) returns.push((await agent.update())['charts/episodic_return']!);
      return returns;
    };
    const sarsa = await online(createSarsa);
    const qLearning = await online(createQLearning);
    expect(mean(sarsa.slice(0, 20))).toBeLessThan(-150); // it starts out wandering…
    expect(mean(sarsa.slice(-200))).toBeGreaterThan(-35); // …and improves
    expect(mean(sarsa.slice(-200))).toBeGreaterThan(mean(qLearning.slice(-200)) + 10);
  });
});

describe('SARSA runs', () => {
  it('is deterministic: same seed, same metrics and table; another seed differs', async () => {
    const run = async (seed: number) => {
      const agent = createSarsa(createFrozenLake(), { alpha: 0.2, epsilon: 0.3 }, seed);
      const metrics = [];
      for (let i = 0; i < 60; i++) metrics.push(await agent.update());
      return { metrics, q: Array.from(agent.qValues()) };
    };
    const a = await run(4);
    expect(await run(4)).toEqual(a);
    expect((await run(5)).metrics).not.toEqual(a.metrics);
  });

  it('refuses bad values with the field and range named', () => {
    const env = createFrozenLake();
    expect(() => createSarsa(env, { gamma: 1.01 })).toThrow(OpInputError);
    expect(() => createSarsa(env, { gamma: 1.01 })).toThrow(
      'sarsa: gamma must be a number in [0, 1], got 1.01',
    );
    expect(() => createSarsa(env, { maxEpisodeSteps: 0 })).toThrow(
      'maxEpisodeSteps must be an integer in [1, 10000000], got 0',
    );
    const agent = createSarsa(env);
    expect(() => agent.setHyperparams({ initialQ: 1 })).toThrow(
      'cannot change while the run trains',
    );
  });
});
