import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import {
  CARTPOLE_TRAJECTORY,
  gaeCurve,
  monteCarloAdvantages,
  td0Advantages,
  type GaeTrajectory,
} from '../../src/lessons/gae-curve';

/** Three steps, r = 1 each, V = (2, 3, 4), the episode ends after step 2. */
const THREE: GaeTrajectory = { rewards: [1, 1, 1], values: [2, 3, 4], dones: [0, 0, 1] };

const pick = (steps: ReturnType<typeof gaeCurve>, key: 'delta' | 'advantage' | 'ret') =>
  steps.map((s) => s[key]);
const close = (actual: number[], expected: number[]) => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((a, i) => expect(a, `index ${i}`).toBeCloseTo(expected[i]!, 5));
};

describe('gaeCurve: hand-worked three-step case, γ = 0.5', () => {
  // δ_t = r_t + γ·V_{t+1}·(1 − done_t) − V_t
  //   δ_2 = 1 + 0        − 4 = −3   (terminal: no bootstrap)
  //   δ_1 = 1 + 0.5·4    − 3 =  0
  //   δ_0 = 1 + 0.5·3    − 2 =  0.5
  it('λ = 0 gives the TD errors, and R = δ + V', () => {
    const steps = gaeCurve(0.5, 0, THREE);
    close(pick(steps, 'delta'), [0.5, 0, -3]);
    close(pick(steps, 'advantage'), [0.5, 0, -3]);
    close(pick(steps, 'ret'), [2.5, 3, 1]); // 0.5 + 2, 0 + 3, −3 + 4
    close(td0Advantages(0.5, THREE), [0.5, 0, -3]);
  });

  // G_2 = 1, G_1 = 1 + 0.5·1 = 1.5, G_0 = 1 + 0.5·1.5 = 1.75; A = G − V = (−0.25, −1.5, −3).
  it('λ = 1 gives the discounted return minus V, and R = G', () => {
    const steps = gaeCurve(0.5, 1, THREE);
    close(pick(steps, 'advantage'), [-0.25, -1.5, -3]);
    close(pick(steps, 'ret'), [1.75, 1.5, 1]);
    close(pick(steps, 'delta'), [0.5, 0, -3]);
    close(monteCarloAdvantages(0.5, THREE), [-0.25, -1.5, -3]);
  });

  // γλ = 0.25: A_2 = −3, A_1 = 0 + 0.25·(−3) = −0.75, A_0 = 0.5 + 0.25·(−0.75) = 0.3125.
  it('λ = 0.5 sits in between, by the recursion A_t = δ_t + γλ·A_{t+1}', () => {
    const steps = gaeCurve(0.5, 0.5, THREE);
    close(pick(steps, 'advantage'), [0.3125, -0.75, -3]);
    close(pick(steps, 'ret'), [2.3125, 2.25, 1]);
  });

  // dones = (1, 0, 1): step 0 ends its own episode, so nothing flows back from step 1.
  //   A_2 = −3, A_1 = 0 + 0.5·(−3) = −1.5 (as before)
  //   δ_0 = 1 + 0 − 2 = −1 and A_0 = δ_0 = −1 (without the cut it would be −0.25)
  it('a terminal cuts bootstrapping and the backward flow', () => {
    const steps = gaeCurve(0.5, 1, { ...THREE, dones: [1, 0, 1] });
    close(pick(steps, 'delta'), [-1, 0, -3]);
    close(pick(steps, 'advantage'), [-1, -1.5, -3]);
  });
});

describe('gaeCurve on the lesson trajectory', () => {
  it('has 14 CartPole steps ending in a fall', () => {
    expect(CARTPOLE_TRAJECTORY.rewards).toEqual(Array(14).fill(1));
    expect(CARTPOLE_TRAJECTORY.values).toHaveLength(14);
    expect(CARTPOLE_TRAJECTORY.dones.indexOf(1)).toBe(13);
  });

  it.each([
    // Last step, any λ: A_13 = δ_13 = 1 − V_13 = 1 − 3.1 = −2.1.
    [0.98, 0.3, 13, 'advantage', -2.1],
    // δ_0 = 1 + 0.98·8.9 − 8.6 = 1 + 8.722 − 8.6 = 1.122.
    [0.98, 0.95, 0, 'delta', 1.122],
    // γ = λ = 1: A_0 = (sum of 14 rewards) − V_0 = 14 − 8.6 = 5.4.
    [1, 1, 0, 'advantage', 5.4],
    // γ = λ = 1, R_0 = 14.
    [1, 1, 0, 'ret', 14],
    // λ = 0, t = 12: δ_12 = 1 + 0.98·3.1 − 3.9 = 1 + 3.038 − 3.9 = 0.138.
    [0.98, 0, 12, 'advantage', 0.138],
  ] as const)('γ=%f λ=%f: step %i %s = %f (by hand)', (gamma, lambda, t, key, expected) => {
    expect(gaeCurve(gamma, lambda)[t]![key]).toBeCloseTo(expected, 4);
  });
});

/** Random trajectories: T in [1, 16], r in [−5, 5], V in [−10, 10], random episode ends. */
const trajectory = fc.integer({ min: 1, max: 16 }).chain((steps) =>
  fc.record({
    rewards: fc.array(fc.double({ min: -5, max: 5, noNaN: true }), {
      minLength: steps,
      maxLength: steps,
    }),
    values: fc.array(fc.double({ min: -10, max: 10, noNaN: true }), {
      minLength: steps,
      maxLength: steps,
    }),
    dones: fc.array(fc.constantFrom(0, 1), { minLength: steps, maxLength: steps }),
  }),
);
const unit = fc.double({ min: 0, max: 1, noNaN: true });
/** The op rounds inputs to f32; the oracles below use the same rounded inputs. */
const f32 = (xs: readonly number[]) => xs.map((x) => Math.fround(x));
const near = (a: number, b: number) => Math.abs(a - b) <= 1e-3 * (1 + Math.abs(b));

describe('gaeCurve properties', () => {
  it('λ = 0 ⇒ A_t = δ_t = r_t + γ·V_{t+1}·(1 − done_t) − V_t', () => {
    fc.assert(
      fc.property(trajectory, unit, (traj, gamma) => {
        const r = f32(traj.rewards);
        const v = f32(traj.values);
        const steps = gaeCurve(gamma, 0, traj);
        return steps.every((s, t) => {
          const next = traj.dones[t] === 1 || t === v.length - 1 ? 0 : v[t + 1]!;
          const delta = r[t]! + Math.fround(gamma) * next - v[t]!;
          return near(s.advantage, delta) && near(s.delta, delta);
        });
      }),
    );
  });

  it('γ = λ = 1 ⇒ A_t = (sum of rewards from t to the episode end) − V_t', () => {
    fc.assert(
      fc.property(trajectory, (traj) => {
        const r = f32(traj.rewards);
        const v = f32(traj.values);
        return gaeCurve(1, 1, traj).every((s, t) => {
          let sum = 0;
          for (let k = t; k < r.length; k++) {
            sum += r[k]!;
            if (traj.dones[k] === 1) break;
          }
          return near(s.advantage, sum - v[t]!);
        });
      }),
    );
  });

  it('R_t = A_t + V_t, and A_t = δ_t + γλ·(1 − done_t)·A_{t+1}', () => {
    fc.assert(
      fc.property(trajectory, unit, unit, (traj, gamma, lambda) => {
        const v = f32(traj.values);
        const steps = gaeCurve(gamma, lambda, traj);
        const gl = Math.fround(gamma) * Math.fround(lambda);
        return steps.every((s, t) => {
          const next = traj.dones[t] === 1 ? 0 : (steps[t + 1]?.advantage ?? 0);
          return near(s.ret, s.advantage + v[t]!) && near(s.advantage, s.delta + gl * next);
        });
      }),
    );
  });
});

describe('gaeCurve bad input', () => {
  it.each([
    [
      'no steps',
      0.9,
      0.9,
      { rewards: [], values: [], dones: [] },
      'gae-curve: rewards must have T ≥ 1',
    ],
    [
      'values too short',
      0.9,
      0.9,
      { ...THREE, values: [2, 3] },
      'gae-curve: values must have T = 3 elements (as rewards), got 2',
    ],
    [
      'dones too long',
      0.9,
      0.9,
      { ...THREE, dones: [0, 0, 0, 1] },
      'gae-curve: dones must have T = 3 elements (as rewards), got 4',
    ],
    ['γ above 1', 1.5, 0.9, THREE, 'gae: gamma must be in [0, 1], got 1.5'],
    ['λ below 0', 0.9, -0.1, THREE, 'gae: lambda must be in [0, 1], got -0.1'],
    [
      'a done flag of 2',
      0.9,
      0.9,
      { ...THREE, dones: [0, 2, 1] },
      'gae: dones must be 0 or 1, but index 1',
    ],
    [
      'a NaN value',
      0.9,
      0.9,
      { ...THREE, values: [2, NaN, 4] },
      'gae: values must be finite, but index 1',
    ],
  ] as const)('%s → %s', (_name, gamma, lambda, traj, message) => {
    const before = JSON.stringify(traj);
    const call = () => gaeCurve(gamma, lambda, traj as GaeTrajectory);
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
    expect(JSON.stringify(traj)).toBe(before);
  });
});
