/**
 * The PPO clipped objective as a function of the ratio, for the lesson plot. Every point comes
 * from the real CPU op (src/ops/policy-loss.ts policyLoss) on a single token: logp = ln r,
 * oldLogp = 0, advantage A, mask 1, so the plot shows exactly what the trainer optimizes. The
 * objective is the negated loss, J = −ℓ.
 */
import { policyLoss } from '../ops/policy-loss';

export interface ClipCurveOptions {
  /** Clip range ε (clipLow = clipHigh = ε), in (0, 1). */
  epsilon: number;
  /** Dual-clip constant c > 1, or null for off. */
  dualClip: number | null;
  /** Ratios sampled: `points` values evenly spaced in [rMin, rMax], rMin > 0. */
  rMin?: number;
  rMax?: number;
  points?: number;
}

export interface ClipPoint {
  ratio: number;
  /** J = −ℓ for this advantage. */
  objective: number;
  /** The unclipped surrogate r·A (drawn dashed for comparison). */
  unclipped: number;
  clipped: boolean;
  dualHit: boolean;
}

/** One token's objective and clip flags from policyLoss. */
export function clipPoint(ratio: number, advantage: number, options: ClipCurveOptions): ClipPoint {
  const one = (x: number) => Float32Array.of(x);
  const result = policyLoss(one(Math.log(ratio)), one(0), one(advantage), one(1), 1, 1, {
    lossType: 'ppo',
    clipLow: options.epsilon,
    clipHigh: options.epsilon,
    dualClip: options.dualClip,
    logRatioClamp: null,
    aggregation: 'token-mean',
  });
  return {
    ratio,
    objective: -result.loss,
    unclipped: ratio * advantage,
    clipped: result.stats.pg_clipfrac > 0,
    dualHit: result.stats.pg_clipfrac_lower > 0,
  };
}

export function clipCurve(advantage: number, options: ClipCurveOptions): ClipPoint[] {
  const { rMin = 0.05, rMax = 4, points = 160 } = options;
  return Array.from({ length: points }, (_, i) =>
    clipPoint(rMin + ((rMax - rMin) * i) / (points - 1), advantage, options),
  );
}
