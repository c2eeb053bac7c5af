/**
 * GAE on one fixed trajectory, for the lesson plot (::gae-plot). Every number comes from the real
 * CPU op (src/ops/gae.ts gae) on a single row: advantages A_t and returns R_t = A_t + V_t at the
 * reader's (γ, λ), and the TD errors δ_t as the same op at λ = 0 (GAE with λ = 0 is exactly
 * δ_t = r_t + γ·V_{t+1}·(1 − done_t) − V_t). The Monte-Carlo reference is the op at λ = 1.
 * Nothing here re-implements the recursion, so the plot shows what the trainers compute.
 */
import { gae, type GaeResult } from '../ops/gae';
import { OpInputError } from '../ops/errors';

const OP = 'gae-curve';

/** One episode (or several, split by dones): per-step arrays of equal length T ≥ 1. */
export interface GaeTrajectory {
  /** (T) reward r_t received after the action at step t. */
  rewards: readonly number[];
  /** (T) the critic's estimate V(s_t). */
  values: readonly number[];
  /** (T) 1 = the episode ends after step t (no bootstrapping from V_{t+1}); 0 otherwise. */
  dones: readonly number[];
}

/**
 * Teaching data, not a recorded run: a CartPole-like episode of 14 steps. The rewards are
 * CartPole's (+1 for every step the pole stays up) and the pole falls after step 13, so
 * done_13 = 1. The values are hand-picked to look like a half-trained critic's under γ = 0.98:
 * it has learned that an upright pole is worth "about 8–9" but not that this episode is about to
 * end. Against the true discounted returns G_t = (1 − 0.98^(14−t)) / 0.02 (G_0 ≈ 12.32,
 * G_10 ≈ 3.88, G_13 = 1) it is too low early on and too high in the last steps, which is what
 * makes λ matter: TD(0) trusts these values, Monte Carlo ignores them.
 */
export const CARTPOLE_TRAJECTORY: GaeTrajectory = {
  rewards: Array.from({ length: 14 }, () => 1),
  values: [8.6, 8.9, 8.7, 8.4, 8.5, 8.0, 7.6, 7.7, 7.0, 6.3, 5.6, 4.8, 3.9, 3.1],
  dones: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
};

export interface GaeStep {
  t: number;
  reward: number;
  value: number;
  /** TD error δ_t (the op at λ = 0). */
  delta: number;
  /** Advantage A_t at the requested (γ, λ). */
  advantage: number;
  /** Return target R_t = A_t + V_t (what the critic is regressed toward). */
  ret: number;
}

/** Checks the trajectory's shape and flags; the op checks γ, λ and finiteness itself. */
function checkTrajectory(trajectory: GaeTrajectory): number {
  const steps = trajectory.rewards.length;
  if (steps < 1) throw new OpInputError(OP, 'rewards', `must have T ≥ 1 steps, got ${steps}`);
  for (const field of ['values', 'dones'] as const) {
    const length = trajectory[field].length;
    if (length !== steps) {
      throw new OpInputError(
        OP,
        field,
        `must have T = ${steps} elements (as rewards), got ${length}`,
      );
    }
  }
  return steps;
}

/** One row through the real op, in verl's mask mode with every step real (mask 1). */
function runGae(trajectory: GaeTrajectory, gamma: number, lambda: number): GaeResult {
  const steps = checkTrajectory(trajectory);
  return gae(
    {
      rewards: Float32Array.from(trajectory.rewards),
      values: Float32Array.from(trajectory.values),
      mask: new Float32Array(steps).fill(1),
      dones: Float32Array.from(trajectory.dones),
    },
    1,
    steps,
    { gamma, lambda, maskMode: 'skip' },
  );
}

/**
 * Per step: δ_t, A_t and R_t for the given γ and λ (each in [0, 1]; out of range is the op's
 * OpInputError naming the field). Two calls of the op: (γ, λ) and (γ, 0).
 */
export function gaeCurve(
  gamma: number,
  lambda: number,
  trajectory: GaeTrajectory = CARTPOLE_TRAJECTORY,
): GaeStep[] {
  const result = runGae(trajectory, gamma, lambda);
  const td = runGae(trajectory, gamma, 0);
  return trajectory.rewards.map((reward, t) => ({
    t,
    reward,
    value: trajectory.values[t]!,
    delta: td.advantages[t]!,
    advantage: result.advantages[t]!,
    ret: result.returns[t]!,
  }));
}

/** The TD(0) end of the family: A_t = δ_t (low variance, biased by the critic). */
export function td0Advantages(gamma: number, trajectory = CARTPOLE_TRAJECTORY): number[] {
  return Array.from(runGae(trajectory, gamma, 0).advantages);
}

/** The Monte-Carlo end: A_t = G_t − V_t, the discounted return minus the baseline. */
export function monteCarloAdvantages(gamma: number, trajectory = CARTPOLE_TRAJECTORY): number[] {
  return Array.from(runGae(trajectory, gamma, 1).advantages);
}
