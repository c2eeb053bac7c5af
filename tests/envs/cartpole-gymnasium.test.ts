/**
 * CartPole-v1 against gymnasium's own code: tests/fixtures/cartpole-gymnasium.json holds episodes
 * that scripts/record-cartpole-gymnasium.py recorded by running gymnasium's CartPoleEnv (see the
 * fixture's `source` for the commit and versions). Replaying their actions from their reset
 * states must give the same float32 observations, rewards and end flags at every step, and the
 * same float64 state at the end, over full 500-step episodes.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CartPole } from '../../src/envs/cartpole';
import { libmCos, libmSin } from '../../src/envs/libm-trig';

interface Episode {
  note: string;
  seed: number;
  resetState: number[];
  resetObservation: number[];
  actions: number[];
  observations: number[][];
  rewards: number[];
  terminated: boolean[];
  truncated: boolean[];
  finalState: number[];
}

const fixture = JSON.parse(
  readFileSync(new URL('../fixtures/cartpole-gymnasium.json', import.meta.url), 'utf8'),
) as {
  source: { commit: string };
  observationSpace: { low: (number | string)[]; high: (number | string)[] };
  episodes: Episode[];
  trig: [number, number, number][];
};

/** The first step whose observation differs from gymnasium's, or -1 when none does. */
function replay(episode: Episode): {
  firstDiff: number;
  steps: number;
  obs: number[][];
  flags: [boolean, boolean][];
  rewards: number[];
  state: number[];
} {
  const env = new CartPole();
  env.reset(episode.seed);
  env.setState(episode.resetState);
  const obs: number[][] = [];
  const flags: [boolean, boolean][] = [];
  const rewards: number[] = [];
  let firstDiff = -1;
  for (const [t, action] of episode.actions.entries()) {
    const out = env.step(action);
    obs.push(Array.from(out.obs));
    flags.push([out.terminated, out.truncated]);
    rewards.push(out.reward);
    const want = episode.observations[t]!.map(Math.fround);
    if (firstDiff < 0 && obs[t]!.some((v, i) => v !== want[i])) firstDiff = t + 1;
    if (out.terminated || out.truncated) break;
  }
  return { firstDiff, steps: obs.length, obs, flags, rewards, state: Array.from(env.state) };
}

describe('CartPole-v1 replays gymnasium episodes bit for bit', () => {
  it('records at least two balanced 500-step episodes and some that fall', () => {
    const lengths = fixture.episodes.map((e) => e.actions.length);
    expect(lengths.filter((n) => n === 500).length).toBeGreaterThanOrEqual(2);
    expect(lengths.some((n) => n < 500)).toBe(true);
    expect(fixture.source.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  for (const episode of fixture.episodes) {
    it(`seed ${episode.seed}, ${episode.note}: ${episode.actions.length} steps`, () => {
      const run = replay(episode);
      expect(run.firstDiff).toBe(-1);
      expect(run.steps).toBe(episode.actions.length);
      expect(run.obs).toEqual(episode.observations.map((o) => o.map(Math.fround)));
      expect(run.rewards).toEqual(episode.rewards);
      expect(run.flags).toEqual(episode.terminated.map((t, i) => [t, episode.truncated[i]]));
      // The float64 state, not only its float32 rounding.
      expect(run.state).toEqual(episode.finalState);
    });
  }

  it('observes the reset state as gymnasium does (float64 state, float32 observation)', () => {
    for (const episode of fixture.episodes) {
      const env = new CartPole();
      env.reset(episode.seed);
      env.setState(episode.resetState);
      expect(env.state).toEqual(Float64Array.from(episode.resetState));
      expect(Array.from(Float32Array.from(env.state))).toEqual(
        episode.resetObservation.map(Math.fround),
      );
    }
  });

  it("has gymnasium's observation space, infinite velocity bounds included", () => {
    const box = new CartPole().observationSpace;
    if (box.kind !== 'box') throw new Error('expected a box');
    expect(box.low).toEqual(fixture.observationSpace.low.map(Number));
    expect(box.high).toEqual(fixture.observationSpace.high.map(Number));
    expect(box.high[1]).toBe(Infinity);
    expect(box.low[3]).toBe(-Infinity);
  });
});

describe("sin and cos as numpy's (glibc's) in CartPole's angle range", () => {
  it('gives numpy float64 np.sin / np.cos bit for bit', () => {
    const wrong = fixture.trig.filter(([x, s, c]) => libmSin(x) !== s || libmCos(x) !== c);
    expect(wrong).toEqual([]);
    // Math.sin/Math.cos (V8's fdlibm) differ in the last bit on some of these: the reason for
    // libm-trig. If this fails, the samples no longer exercise the difference.
    const mathWrong = fixture.trig.filter(([x, s, c]) => Math.sin(x) !== s || Math.cos(x) !== c);
    expect(mathWrong.length).toBeGreaterThan(0);
  });

  it('keeps the exact values at the edge cases of its method', () => {
    expect(libmSin(0)).toBe(0);
    expect(Object.is(libmSin(-0), -0)).toBe(true);
    expect(libmCos(0)).toBe(1);
    expect(libmSin(2 ** -30)).toBe(2 ** -30);
    expect(libmCos(-(2 ** -30))).toBe(1);
    // Odd and even, as glibc's are.
    for (const [x] of fixture.trig) {
      expect(libmSin(-x)).toBe(-libmSin(x));
      expect(libmCos(-x)).toBe(libmCos(x));
    }
    // Outside the table range it is Math's.
    expect(libmSin(2)).toBe(Math.sin(2));
    expect(libmCos(-3)).toBe(Math.cos(-3));
    expect(libmSin(NaN)).toBeNaN();
  });
});
