/** CartPole-v1: single steps worked by hand from gymnasium's equations, and the episode rules. */
import { describe, expect, it } from 'vitest';
import { CARTPOLE, CartPole } from '../../src/envs/cartpole';
import { EnvError } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';

/** A fresh episode placed at `state` (reset first: setState needs a running episode). */
function at(state: number[], options = {}): CartPole {
  const env = new CartPole(options);
  env.reset(0);
  env.setState(state);
  return env;
}

describe('CartPole-v1 dynamics', () => {
  it('steps from rest with action 1 (push right) as worked by hand', () => {
    // s = (0, 0, 0, 0), F = +10; cos 0 = 1, sin 0 = 0; m_c + m_p = 1.1, m_p·l = 0.05.
    // temp = (10 + 0.05·0²·0) / 1.1 = 100/11
    // θ̈ = (9.8·0 − 1·100/11) / (0.5·(4/3 − 0.1·1/1.1)) = −(100/11) / (0.5·41/33)
    //    = −(100/11)·(66/41) = −600/41 = −14.634146…
    // ẍ = 100/11 − 0.05·(−600/41)·1/1.1 = 100/11 + 300/451 = 4100/451 + 300/451 = 4400/451
    // Euler, τ = 0.02: x = 0 + 0.02·0 = 0; ẋ = 0.02·4400/451 = 88/451 = 0.195122…;
    //                 θ = 0 + 0.02·0 = 0; θ̇ = 0.02·(−600/41) = −12/41 = −0.292683…
    const env = at([0, 0, 0, 0]);
    const out = env.step(1);
    const s = env.state;
    expect(s[0]).toBe(0);
    expect(s[1]).toBeCloseTo(88 / 451, 14);
    expect(s[2]).toBe(0);
    expect(s[3]).toBeCloseTo(-12 / 41, 14);
    expect(out.reward).toBe(1);
    expect(out.terminated).toBe(false);
    expect(out.truncated).toBe(false);
    // The observation is the state rounded to float32.
    expect(out.obs).toBeInstanceOf(Float32Array);
    expect(Array.from(out.obs)).toEqual([0, Math.fround(88 / 451), 0, Math.fround(-12 / 41)]);
  });

  it('is mirror-symmetric: action 0 from rest gives the negated velocities', () => {
    // F = −10 flips the sign of temp, θ̈ and ẍ: ẋ = −88/451, θ̇ = +12/41.
    const env = at([0, 0, 0, 0]);
    env.step(0);
    expect(env.state[1]).toBeCloseTo(-88 / 451, 14);
    expect(env.state[3]).toBeCloseTo(12 / 41, 14);
  });

  it('steps a tilted, moving pole with action 0 (push left) as worked by hand', () => {
    // s = (x, ẋ, θ, θ̇) = (0.5, 1, 0.1, −0.5), F = −10.
    // cos 0.1 = 0.99500417, sin 0.1 = 0.09983342
    // temp = (−10 + 0.05·0.25·0.09983342) / 1.1 = (−10 + 0.00124792) / 1.1 = −9.08977462
    // numerator of θ̈: 9.8·0.09983342 − 0.99500417·(−9.08977462) = 0.97836748 + 9.04436361
    //                = 10.02273109
    // denominator: 0.5·(4/3 − 0.1·0.99003329/1.1) = 0.5·(1.33333333 − 0.09000303) = 0.62166515
    // θ̈ = 10.02273109 / 0.62166515 = 16.12239489
    // ẍ = −9.08977462 − 0.05·16.12239489·0.99500417/1.1 = −9.08977462 − 0.72917500 = −9.81894962
    // Euler: x = 0.5 + 0.02·1 = 0.52; ẋ = 1 + 0.02·(−9.81894962) = 0.80362101;
    //        θ = 0.1 + 0.02·(−0.5) = 0.09; θ̇ = −0.5 + 0.02·16.12239489 = −0.17755210
    const env = at([0.5, 1, 0.1, -0.5]);
    env.step(0);
    const s = env.state;
    expect(s[0]).toBeCloseTo(0.52, 12);
    expect(s[1]).toBeCloseTo(0.80362101, 7);
    expect(s[2]).toBeCloseTo(0.09, 12);
    expect(s[3]).toBeCloseTo(-0.1775521, 7);
  });
});

describe('CartPole-v1 episode rules', () => {
  it('resets each component uniformly within [−0.05, 0.05]', () => {
    const env = new CartPole();
    for (let seed = 0; seed < 50; seed++) {
      const { obs } = env.reset(seed);
      for (const v of obs) expect(Math.abs(v)).toBeLessThanOrEqual(0.05);
    }
  });

  it('has gymnasium spaces: Discrete(2), Box ±(4.8, ∞, 24°, ∞) in float32', () => {
    const env = new CartPole();
    expect(env.actionSpace).toEqual({ kind: 'discrete', n: 2 });
    const box = env.observationSpace;
    if (box.kind !== 'box') throw new Error('expected a box');
    expect(box.shape).toEqual([4]);
    // 2·2.4 = 4.8; 2·12·2π/360 = 0.41887902…; the velocities are unbounded (gymnasium ≥ 1.0).
    expect(box.high).toEqual([
      Math.fround(4.8),
      Infinity,
      Math.fround(0.41887902047863906),
      Infinity,
    ]);
    expect(box.low).toEqual(box.high.map((h) => -h));
    expect(CARTPOLE.thetaThresholdRadians).toBeCloseTo(0.20943951, 8);
  });

  it('terminates when x passes 2.4, paying 1 on the terminating step', () => {
    // x = 2.39, ẋ = 1: x' = 2.39 + 0.02·1 = 2.41 > 2.4 → terminated.
    const env = at([2.39, 1, 0, 0]);
    const out = env.step(1);
    expect(out.terminated).toBe(true);
    expect(out.truncated).toBe(false);
    expect(out.reward).toBe(1);
    // x' = 2.39 + 0.02·0.4 = 2.398 is still inside.
    expect(at([2.39, 0.4, 0, 0]).step(1).terminated).toBe(false);
    // Leftwards too: x' = −2.39 − 0.02 = −2.41.
    expect(at([-2.39, -1, 0, 0]).step(0).terminated).toBe(true);
  });

  it('terminates when |θ| passes 12° = 0.20943951 rad', () => {
    // θ' = 0.2 + 0.02·1 = 0.22 > 0.2094 → terminated; θ' = 0.2 + 0.02·0.4 = 0.208 → not.
    expect(at([0, 0, 0.2, 1]).step(1).terminated).toBe(true);
    expect(at([0, 0, 0.2, 0.4]).step(1).terminated).toBe(false);
    expect(at([0, 0, -0.2, -1]).step(0).terminated).toBe(true);
  });

  it('truncates at 500 steps (not terminated), then refuses further steps', () => {
    const env = new CartPole();
    env.reset(3);
    for (let t = 1; t <= 500; t++) {
      env.setState([0, 0, 0, 0]); // keep it balanced: only the time limit can end it
      const out = env.step(t % 2);
      expect(out.terminated).toBe(false);
      expect(out.truncated).toBe(t === 500);
    }
    expect(env.elapsedSteps).toBe(500);
    expect(() => env.step(0)).toThrow(EnvError);
  });

  it('can report terminated and truncated together on the last step', () => {
    const env = new CartPole({ maxEpisodeSteps: 1 });
    env.reset(0);
    env.setState([2.39, 1, 0, 0]);
    const out = env.step(1);
    expect(out.terminated && out.truncated).toBe(true);
  });

  it('replays an episode exactly from its seed, and continues the stream without one', () => {
    const run = (env: CartPole, seed?: number) => {
      const obs = [Array.from(env.reset(seed).obs)];
      for (;;) {
        const out = env.step(obs.length % 3 === 0 ? 0 : 1);
        obs.push(Array.from(out.obs));
        if (out.terminated || out.truncated) return obs;
      }
    };
    const a = new CartPole();
    const b = new CartPole();
    expect(run(a, 42)).toEqual(run(b, 42));
    expect(run(a)).toEqual(run(b)); // both continue the seed-42 stream
    expect(run(a, 42)[0]).not.toEqual(run(b, 43)[0]);
  });
});

describe('CartPole-v1 bad input', () => {
  it('names the env and the step for a bad action', () => {
    const env = new CartPole();
    env.reset(0);
    env.step(1);
    env.step(0);
    let error: unknown;
    try {
      env.step(2);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EnvError);
    expect((error as EnvError).env).toBe('CartPole-v1');
    expect((error as EnvError).step).toBe(2);
    expect((error as Error).message).toMatch(
      /CartPole-v1, step 2: action must be 0 .* or 1 .*got 2/,
    );
    for (const bad of [-1, 0.5, NaN]) expect(() => env.step(bad)).toThrow(EnvError);
  });

  it('refuses step() before reset() and after termination', () => {
    expect(() => new CartPole().step(0)).toThrow(/before reset/);
    const env = at([2.39, 1, 0, 0]);
    env.step(1);
    expect(() => env.step(1)).toThrow(/episode ended/);
  });

  it('checks options and states', () => {
    expect(() => new CartPole({ maxEpisodeSteps: 0 })).toThrow(OpInputError);
    expect(() => at([0, 0, 0])).toThrow(/state must have/);
    expect(() => at([0, NaN, 0, 0])).toThrow(/finite/);
    expect(() => new CartPole().reset(-1)).toThrow(/seed/);
  });
});
