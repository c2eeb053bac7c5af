/**
 * CartPole-v1 with gymnasium's dynamics, constants and rules, step for step (the cart-pole of
 * Barto, Sutton & Anderson 1983, as gymnasium's classic_control/cartpole.py integrates it).
 *
 * State s = (x, ẋ, θ, θ̇): cart position (m), cart velocity, pole angle from upright (rad),
 * angular velocity. Action 0 pushes the cart left with 10 N, action 1 pushes it right. One step:
 *
 *   F = ±force_mag,  c = cos θ,  s = sin θ
 *   temp = (F + m_p·l·θ̇²·s) / (m_c + m_p)
 *   θ̈ = (g·s − c·temp) / (l·(4/3 − m_p·c² / (m_c + m_p)))
 *   ẍ = temp − m_p·l·θ̈·c / (m_c + m_p)
 *   Euler (gymnasium's default kinematics_integrator "euler"), τ = 0.02 s:
 *   x += τ·ẋ;  ẋ += τ·ẍ;  θ += τ·θ̇;  θ̇ += τ·θ̈      (positions use the OLD velocities)
 *
 * with g = 9.8, m_c = 1.0, m_p = 0.1, l = 0.5 (HALF the pole's length), force_mag = 10.
 *
 * Episode rules: reset draws each state component uniformly from [−0.05, 0.05]; the episode
 * terminates when |x| > 2.4 or |θ| > 12° = 12·2π/360 rad; the reward is +1 for every step,
 * including the terminating one; the TimeLimit of the v1 registration truncates at 500 steps
 * (terminated and truncated may both be true on step 500). A step after the episode ended throws
 * EnvError (gymnasium only warns and pays 0).
 *
 * Observations are Float32Array(4), as gymnasium returns float32 arrays; the state itself is kept
 * in float64 as gymnasium's numpy state is, and each step does gymnasium's float64 operations in
 * gymnasium's order (np.square(θ̇) and np.square(cos θ) rounded on their own) with glibc's sin and
 * cos (./libm-trig), which numpy calls. Replaying gymnasium's actions from gymnasium's reset state
 * gives its observations, rewards, end flags and float64 state bit for bit over whole 500-step
 * episodes (tests/envs/cartpole-gymnasium.test.ts, against episodes recorded from gymnasium's own
 * code by scripts/record-cartpole-gymnasium.py). Reset draws come from the lab's random stream,
 * not numpy's PCG64, so a seed gives a different (equally distributed) start than gymnasium's.
 * The observation space bounds are gymnasium's (≥ 1.0): ±(2·2.4, ∞, 2·12°, ∞) in float32.
 * Before the first seeded reset the stream is seed 0.
 */
import { checkInt, checkLength, checkFinite } from '../ops/validate';
import { randomStream, type RandomStream } from '../util/random';
import { libmCos, libmSin } from './libm-trig';
import { SnapshotReader } from './snapshot';
import {
  EnvError,
  type Env,
  type EnvSnapshot,
  type Info,
  type Space,
  type StepResult,
} from './types';

/** gymnasium's CartPoleEnv constants. */
export const CARTPOLE = {
  gravity: 9.8,
  massCart: 1.0,
  massPole: 0.1,
  /** Half the pole's length (gymnasium: "actually half the pole's length"). */
  length: 0.5,
  forceMag: 10.0,
  /** Seconds between state updates. */
  tau: 0.02,
  /** |θ| beyond this terminates: 12 degrees. */
  thetaThresholdRadians: (12 * 2 * Math.PI) / 360,
  /** |x| beyond this terminates. */
  xThreshold: 2.4,
  /** Each component of the reset state is uniform in [−resetBound, resetBound]. */
  resetBound: 0.05,
  /** CartPole-v1's registered max_episode_steps. */
  maxEpisodeSteps: 500,
} as const;

export interface CartPoleOptions {
  /** Truncation limit (gymnasium TimeLimit max_episode_steps), an integer in [1, 10⁶]. Default 500. */
  maxEpisodeSteps?: number;
}

export class CartPole implements Env<Float32Array, number> {
  readonly id = 'CartPole-v1';
  readonly observationSpace: Space;
  /** 0: push left, 1: push right. */
  readonly actionSpace: Space = { kind: 'discrete', n: 2 };
  readonly maxEpisodeSteps: number;
  /** (x, ẋ, θ, θ̇) in float64. */
  private readonly s = new Float64Array(4);
  /** The seed of the last reset(seed) (0 before any), and the stream it started. */
  private seed = 0;
  private random: RandomStream = randomStream(0);
  /** Steps taken in this episode; null before the first reset. */
  private steps: number | null = null;
  private done = false;

  constructor(options: CartPoleOptions = {}) {
    this.maxEpisodeSteps = options.maxEpisodeSteps ?? CARTPOLE.maxEpisodeSteps;
    checkInt('CartPole', 'maxEpisodeSteps', this.maxEpisodeSteps, 1, 1e6);
    // gymnasium ≥ 1.0: high = [2·x_threshold, inf, 2·theta_threshold, inf] as float32 (0.x used
    // finfo(float32).max for the velocities); low = −high.
    const high = [
      Math.fround(CARTPOLE.xThreshold * 2),
      Infinity,
      Math.fround(CARTPOLE.thetaThresholdRadians * 2),
      Infinity,
    ];
    this.observationSpace = { kind: 'box', shape: [4], low: high.map((h) => -h), high };
  }

  /** A copy of the float64 state (x, ẋ, θ, θ̇). */
  get state(): Float64Array {
    return Float64Array.from(this.s);
  }

  /** Steps taken in the current episode. */
  get elapsedSteps(): number {
    return this.steps ?? 0;
  }

  /**
   * Places the system in `state` (x, ẋ, θ, θ̇) mid-episode, as setting gymnasium's
   * `env.unwrapped.state` does; the step count and the random stream are unchanged. For tests and
   * the lab's "nudge the pole" control. Requires a running episode.
   */
  setState(state: ArrayLike<number>): void {
    if (this.steps === null || this.done) {
      throw new EnvError(this.id, this.steps ?? 0, 'setState() needs a running episode');
    }
    const values = Float64Array.from(state);
    checkLength(this.id, 'state', values, 4, '(x, ẋ, θ, θ̇)');
    checkFinite(this.id, 'state', values);
    this.s.set(values);
  }

  snapshot(): EnvSnapshot {
    return {
      seed: this.seed,
      draws: this.random.draws,
      state: Array.from(this.s),
      steps: this.steps,
      done: this.done,
    };
  }

  restore(snapshot: EnvSnapshot): void {
    const read = new SnapshotReader(snapshot, this.id, this.elapsedSteps);
    const seed = read.int('seed', 0, 2 ** 32 - 1);
    const draws = read.int('draws', 0, Number.MAX_SAFE_INTEGER);
    const state = read.numbers('state', { length: 4 });
    const steps = snapshot.steps === null ? null : read.int('steps', 0, this.maxEpisodeSteps);
    const done = read.boolean('done');
    if (steps === null && done) {
      throw new EnvError(this.id, this.elapsedSteps, 'snapshot.done must be false before a reset');
    }
    this.seed = seed;
    this.random = randomStream(seed, draws);
    this.s.set(state);
    this.steps = steps;
    this.done = done;
  }

  reset(seed?: number): { obs: Float32Array; info: Info } {
    if (seed !== undefined) {
      checkInt(this.id, 'seed', seed, 0, 2 ** 32 - 1);
      this.seed = seed;
      this.random = randomStream(seed);
    }
    // Uniform in [−0.05, 0.05): −b + 2b·u, u ∈ [0, 1).
    for (let i = 0; i < 4; i++) {
      this.s[i] = -CARTPOLE.resetBound + 2 * CARTPOLE.resetBound * this.random();
    }
    this.steps = 0;
    this.done = false;
    return { obs: Float32Array.from(this.s), info: {} };
  }

  step(action: number): StepResult<Float32Array> {
    if (this.steps === null) {
      throw new EnvError(this.id, 0, 'step() before reset(); call reset() first');
    }
    if (this.done) throw new EnvError(this.id, this.steps, 'the episode ended; call reset()');
    if (action !== 0 && action !== 1) {
      throw new EnvError(
        this.id,
        this.steps,
        `action must be 0 (push left) or 1 (push right), got ${action}`,
      );
    }
    const { gravity, massCart, massPole, length, forceMag, tau } = CARTPOLE;
    const totalMass = massPole + massCart;
    const poleMassLength = massPole * length;
    const x = this.s[0]!;
    const xDot = this.s[1]!;
    const theta = this.s[2]!;
    const thetaDot = this.s[3]!;

    const force = action === 1 ? forceMag : -forceMag;
    // numpy's np.cos/np.sin are glibc's, which differ from Math.cos/Math.sin in the last bit
    // for about 1% of angles; the unstable pole grows such a bit into a different episode.
    const cos = libmCos(theta);
    const sin = libmSin(theta);
    // gymnasium's order of operations to the rounding: np.square(θ̇) and np.square(cos θ) are
    // rounded products of their own before the mass factor multiplies them.
    const temp = (force + poleMassLength * (thetaDot * thetaDot) * sin) / totalMass;
    const thetaAcc =
      (gravity * sin - cos * temp) / (length * (4 / 3 - (massPole * (cos * cos)) / totalMass));
    const xAcc = temp - (poleMassLength * thetaAcc * cos) / totalMass;

    // Euler: positions advance with the old velocities.
    this.s[0] = x + tau * xDot;
    this.s[1] = xDot + tau * xAcc;
    this.s[2] = theta + tau * thetaDot;
    this.s[3] = thetaDot + tau * thetaAcc;
    this.steps += 1;

    const nx = this.s[0];
    const nTheta = this.s[2];
    const terminated =
      nx < -CARTPOLE.xThreshold ||
      nx > CARTPOLE.xThreshold ||
      nTheta < -CARTPOLE.thetaThresholdRadians ||
      nTheta > CARTPOLE.thetaThresholdRadians;
    const truncated = this.steps >= this.maxEpisodeSteps;
    this.done = terminated || truncated;
    // +1 on every step, the terminating one included (gymnasium's default, not sutton_barto_reward).
    return { obs: Float32Array.from(this.s), reward: 1, terminated, truncated, info: {} };
  }
}
