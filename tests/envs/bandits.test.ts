/** Bandits: k-armed testbed and contextual bandit — spaces, one-step episodes, noise, seeds. */
import { describe, expect, it } from 'vitest';
import { ContextualBandit, KArmedBandit } from '../../src/envs/bandits';
import { EnvError } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';

function pulls(env: KArmedBandit | ContextualBandit, action: number, count: number): number[] {
  const rewards: number[] = [];
  for (let i = 0; i < count; i++) {
    env.reset();
    rewards.push(env.step(action).reward);
  }
  return rewards;
}

function meanAndVariance(xs: number[]): [number, number] {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return [mean, variance];
}

describe('KArmedBandit', () => {
  it('pays exactly q*(a) with no noise, and reports regret and optimality', () => {
    // q* = [0.2, −0.5, 1.0, 0.4, −0.1]: the optimal arm is 2 (q* = 1.0).
    const env = new KArmedBandit({ qStar: [0.2, -0.5, 1.0, 0.4, -0.1], rewardStd: 0 });
    expect(env.id).toBe('KArmedBandit-5');
    expect(env.actionSpace).toEqual({ kind: 'discrete', n: 5 });
    expect(env.observationSpace).toEqual({ kind: 'discrete', n: 1 });
    expect(env.optimalArm).toBe(2);
    expect(env.reset(1)).toEqual({ obs: 0, info: {} });
    const out = env.step(3);
    // Regret of arm 3: 1.0 − 0.4 = 0.6.
    expect(out).toEqual({
      obs: 0,
      reward: 0.4,
      terminated: true,
      truncated: false,
      info: { regret: 1.0 - 0.4, optimal: false },
    });
    env.reset();
    expect(env.step(2).info).toEqual({ regret: 0, optimal: true });
  });

  it('breaks ties towards the lowest arm', () => {
    expect(new KArmedBandit({ qStar: [1, 3, 3, 2] }).optimalArm).toBe(1);
  });

  it('draws rewards from N(q*(a), σ²)', () => {
    // 4000 pulls of N(0.7, 2²): standard error of the mean 2/√4000 ≈ 0.032; of the variance
    // ≈ 4·√(2/3999) ≈ 0.09.
    const env = new KArmedBandit({ qStar: [0.7, 0], rewardStd: 2 });
    env.reset(5);
    const [mean, variance] = meanAndVariance(pulls(env, 0, 4000));
    expect(Math.abs(mean - 0.7)).toBeLessThan(0.15);
    expect(Math.abs(variance - 4)).toBeLessThan(0.4);
  });

  it('draws q* from N(qStarMean, 1) per problem seed (S&B testbed)', () => {
    const a = new KArmedBandit({ seed: 11 });
    expect(a.qStar).toHaveLength(10);
    expect(new KArmedBandit({ seed: 11 }).qStar).toEqual(a.qStar);
    expect(new KArmedBandit({ seed: 12 }).qStar).not.toEqual(a.qStar);
    // Over 200 problems × 10 arms the q* sample mean is within ~4 standard errors (1/√2000).
    const all: number[] = [];
    for (let seed = 0; seed < 200; seed++)
      all.push(...new KArmedBandit({ seed, qStarMean: 4 }).qStar);
    const [mean, variance] = meanAndVariance(all);
    expect(Math.abs(mean - 4)).toBeLessThan(0.1);
    expect(Math.abs(variance - 1)).toBeLessThan(0.15);
  });

  it('replays rewards exactly from the reset seed', () => {
    const a = new KArmedBandit({ seed: 3 });
    const b = new KArmedBandit({ seed: 3 });
    a.reset(9);
    b.reset(9);
    expect(pulls(a, 4, 20)).toEqual(pulls(b, 4, 20));
    a.reset(10);
    b.reset(9);
    expect(pulls(a, 4, 5)).not.toEqual(pulls(b, 4, 5));
  });

  it('refuses bad actions, a second pull, a pull before reset, and bad options', () => {
    const env = new KArmedBandit({ arms: 5 });
    expect(() => env.step(0)).toThrow(/before reset/);
    env.reset(0);
    for (const bad of [5, -1, 1.5, NaN]) {
      expect(() => env.step(bad)).toThrow(EnvError);
    }
    expect(() => env.step(5)).toThrow(
      /KArmedBandit-5, step 0: action must be an integer in \[0, 4\], got 5/,
    );
    env.step(0);
    expect(() => env.step(0)).toThrow(/step 1: the episode ended/);
    expect(() => new KArmedBandit({ arms: 0 })).toThrow(OpInputError);
    expect(() => new KArmedBandit({ qStar: [] })).toThrow(/qStar.length/);
    expect(() => new KArmedBandit({ qStar: [0, Infinity] })).toThrow(
      /qStar must be finite, but index 1/,
    );
    expect(() => new KArmedBandit({ rewardStd: -1 })).toThrow(/rewardStd/);
    expect(() => new KArmedBandit({ seed: 1.5 })).toThrow(/seed/);
  });
});

describe('ContextualBandit', () => {
  // μ(c, a): context 0 prefers arm 1, context 1 prefers arm 0, context 2 prefers arm 2.
  const means = [
    [0, 1, 0.5],
    [2, -1, 0],
    [0, 0, 3],
  ];

  it('observes the context and pays μ(c, a) with regret per context', () => {
    const env = new ContextualBandit({ means, rewardStd: 0 });
    expect(env.id).toBe('ContextualBandit-3x3');
    expect(env.observationSpace).toEqual({ kind: 'discrete', n: 3 });
    expect([0, 1, 2].map((c) => env.optimalArm(c))).toEqual([1, 0, 2]);
    env.reset(0);
    for (let i = 0; i < 30; i++) {
      const { obs: c } = env.reset();
      const out = env.step(0);
      expect(out.obs).toBe(c);
      expect(out.terminated).toBe(true);
      expect(out.reward).toBe(means[c]![0]);
      // Regret of arm 0: 1 − 0 = 1 (c = 0), 2 − 2 = 0 (c = 1), 3 − 0 = 3 (c = 2).
      expect(out.info.regret).toBe([1, 0, 3][c]);
      expect(out.info.optimal).toBe(c === 1);
    }
  });

  it('draws contexts uniformly', () => {
    const env = new ContextualBandit({ contexts: 4, arms: 2, seed: 1 });
    env.reset(2);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[env.reset().obs]! += 1;
    // Each ≈ 1000 ± √(4000·¼·¾) ≈ ±27; allow 5σ.
    for (const n of counts) expect(Math.abs(n - 1000)).toBeLessThan(140);
  });

  it('is deterministic per seed', () => {
    const run = () => {
      const env = new ContextualBandit({ seed: 4 });
      env.reset(8);
      const out: number[] = [];
      for (let i = 0; i < 10; i++) {
        out.push(env.reset().obs);
        out.push(env.step(i % 3).reward);
      }
      return out;
    };
    expect(run()).toEqual(run());
  });

  it('refuses ragged tables, bad contexts and bad actions', () => {
    expect(() => new ContextualBandit({ means: [[0, 1], [0]] })).toThrow(
      /means\[1\] must have 2 arms/,
    );
    expect(() => new ContextualBandit({ means: [[0, NaN]] })).toThrow(/finite/);
    const env = new ContextualBandit({ means });
    expect(() => env.optimalArm(3)).toThrow(/context/);
    env.reset(0);
    expect(() => env.step(3)).toThrow(EnvError);
  });
});
