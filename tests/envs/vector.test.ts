/** SyncVectorEnv (same-step autoreset, seed + i) and RecordEpisodeStatistics. */
import { describe, expect, it } from 'vitest';
import { KArmedBandit } from '../../src/envs/bandits';
import { CartPole } from '../../src/envs/cartpole';
import { EnvError } from '../../src/envs/types';
import {
  EPISODE_LENGTH,
  EPISODE_RETURN,
  RecordEpisodeStatistics,
  SyncVectorEnv,
  endedEpisodes,
} from '../../src/envs/vector';

const cartpoles = (n: number) =>
  new SyncVectorEnv(Array.from({ length: n }, () => () => new CartPole()));

describe('SyncVectorEnv', () => {
  it('seeds sub-env i with seed + i', () => {
    const vec = cartpoles(3);
    const { obs } = vec.reset(10);
    expect(vec.numEnvs).toBe(3);
    expect(vec.id).toBe('SyncVectorEnv(CartPole-v1 × 3)');
    expect(vec.singleActionSpace).toEqual({ kind: 'discrete', n: 2 });
    for (let i = 0; i < 3; i++) expect(obs[i]).toEqual(new CartPole().reset(10 + i).obs);
  });

  it('autoresets in the same step: final obs and info aside, obs is the next episode start', () => {
    // Always pushing right, each CartPole falls within a few dozen steps. A single env replayed
    // with the same seed and actions gives the reference: its terminal obs, then reset().
    const vec = cartpoles(2);
    vec.reset(7);
    const refs = [new CartPole(), new CartPole()];
    refs.forEach((r, i) => r.reset(7 + i));
    let ended = 0;
    for (let t = 0; t < 200; t++) {
      const out = vec.step([1, 1]);
      for (let i = 0; i < 2; i++) {
        const ref = refs[i]!.step(1);
        expect(out.rewards[i]).toBe(1);
        expect(out.terminated[i]).toBe(ref.terminated);
        expect(out.truncated[i]).toBe(false);
        if (ref.terminated) {
          ended += 1;
          expect(out.finalObs[i]).toEqual(ref.obs);
          expect(out.finalInfo[i]).toEqual({});
          expect(out.obs[i]).toEqual(refs[i]!.reset().obs); // the reset continues the stream
          // The reset obs is a fresh start, not the fallen pole.
          for (const v of out.obs[i]!) expect(Math.abs(v)).toBeLessThanOrEqual(0.05);
        } else {
          expect(out.finalObs[i]).toBeUndefined();
          expect(out.finalInfo[i]).toBeUndefined();
          expect(out.obs[i]).toEqual(ref.obs);
        }
      }
    }
    expect(ended).toBeGreaterThan(4);
  });

  it('resets one-step bandit episodes on every step', () => {
    const vec = new SyncVectorEnv(
      [0, 1, 2].map(() => () => new KArmedBandit({ qStar: [0, 1], rewardStd: 0 })),
    );
    vec.reset(0);
    const out = vec.step([0, 1, 1]);
    expect(Array.from(out.rewards)).toEqual([0, 1, 1]);
    expect(out.terminated).toEqual([true, true, true]);
    expect(out.obs).toEqual([0, 0, 0]);
    expect(out.finalInfo).toEqual([
      { regret: 1, optimal: false },
      { regret: 0, optimal: true },
      { regret: 0, optimal: true },
    ]);
    expect(out.infos).toEqual([{}, {}, {}]); // the reset infos
  });

  it('is deterministic: same seed, same actions → same results', () => {
    const run = () => {
      const vec = cartpoles(3);
      const seen: number[][] = [Array.from(vec.reset(99).obs.flatMap((o) => Array.from(o)))];
      for (let t = 0; t < 60; t++) {
        const out = vec.step([t % 2, 1, 0]);
        seen.push(out.obs.flatMap((o) => Array.from(o)));
      }
      return seen;
    };
    expect(run()).toEqual(run());
  });

  it('refuses bad input: wrong action count, step before reset, mismatched spaces', () => {
    const vec = cartpoles(2);
    expect(() => vec.step([0, 0])).toThrow(/before reset/);
    vec.reset(0);
    expect(() => vec.step([0])).toThrow(/one action per sub-env \(2\), got 1/);
    // Discrete actions are all checked before any sub-env steps: nothing moves on bad input.
    const before = vec.envs.map((e) => (e as CartPole).state);
    expect(() => vec.step([0, 2])).toThrow(EnvError);
    expect(() => vec.step([0, 2])).toThrow(
      /× 2\), step 0: actions\[1\] must be an integer in \[0, 1\], got 2/,
    );
    expect(vec.envs.map((e) => (e as CartPole).state)).toEqual(before);
    expect(
      () =>
        new SyncVectorEnv<number, number>([
          () => new KArmedBandit({ arms: 2 }),
          () => new KArmedBandit({ arms: 3 }),
        ]),
    ).toThrow(/sub-env 1 .* different spaces/);
    expect(() => vec.reset(2 ** 32 - 1)).toThrow(/seed/);
  });
});

describe('RecordEpisodeStatistics', () => {
  it('adds the return and length on the ending step only', () => {
    // Bandit with q* = [2, 5] and no noise: a one-pull episode returns q*(a), length 1.
    const env = new RecordEpisodeStatistics(new KArmedBandit({ qStar: [2, 5], rewardStd: 0 }), 2);
    env.reset(0);
    expect(env.step(1).info).toEqual({
      regret: 0,
      optimal: true,
      [EPISODE_RETURN]: 5,
      [EPISODE_LENGTH]: 1,
    });
    for (const a of [0, 0, 1]) {
      env.reset();
      env.step(a);
    }
    // The queues keep the last bufferLength = 2 episodes: returns 2 then 5.
    expect(env.returnQueue).toEqual([2, 5]);
    expect(env.lengthQueue).toEqual([1, 1]);
  });

  it('counts CartPole steps (reward 1 each) and reports them through the vector env', () => {
    const vec = new SyncVectorEnv(
      [0, 1].map(() => () => new RecordEpisodeStatistics(new CartPole())),
    );
    vec.reset(1);
    const steps = [0, 0];
    const reported: { env: number; episodeReturn: number; episodeLength: number }[] = [];
    const expected: typeof reported = [];
    for (let t = 0; t < 150; t++) {
      const out = vec.step([1, 0]);
      for (let i = 0; i < 2; i++) {
        steps[i]! += 1;
        if (out.terminated[i] || out.truncated[i]) {
          expected.push({ env: i, episodeReturn: steps[i]!, episodeLength: steps[i]! });
          steps[i] = 0;
        } else {
          expect(out.infos[i]![EPISODE_RETURN]).toBeUndefined();
        }
      }
      reported.push(...endedEpisodes(out));
    }
    expect(expected.length).toBeGreaterThan(4);
    expect(reported).toEqual(expected);
  });
});
