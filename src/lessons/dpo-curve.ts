/**
 * The DPO loss of one preference pair and its gradient weight, as functions of the pair's
 * log-ratio gap, for the lesson plot. Every point comes from the real CPU op
 * (src/ops/dpo-loss.ts dpoLoss) on a single pair with policy log-probs (z, 0) and reference
 * log-probs (0, 0), so the plot shows exactly what the DPO trainer optimizes:
 *
 *   z = (log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))   the log-ratio gap
 *   m = β·z                                                             the implicit-reward margin
 *
 * The gradient weight is w = −(∂ℓ/∂z)/β, the factor in front of β·(∇log π(y_w) − ∇log π(y_l)) in
 * the descent direction (Rafailov et al. 2023, §4): σ(−m) for DPO, (1 − ε) − σ(m) for cDPO (it
 * turns negative once σ(m) > 1 − ε), and 2·(1/(2β) − z)/β for IPO. The op returns ∂ℓ/∂z as
 * gradChosen (one pair: P = 1), so w is read off it, not recomputed.
 *
 * The op's loss types are 'sigmoid' and 'ipo'; cDPO is 'sigmoid' with label smoothing ε > 0. The
 * plot offers all three as one choice.
 */
import { dpoLoss } from '../ops/dpo-loss';

export const DPO_PLOT_LOSSES = ['sigmoid', 'cdpo', 'ipo'] as const;
export type DpoPlotLoss = (typeof DPO_PLOT_LOSSES)[number];

/** cDPO's label smoothing when the caller gives none (a 10% chance a label is flipped). */
export const DEFAULT_CDPO_EPSILON = 0.1;

export interface DpoCurveOptions {
  /** β > 0 (TRL beta). For IPO it is τ, and the target gap is 1/(2β). */
  beta: number;
  loss: DpoPlotLoss;
  /** cDPO's ε in [0, 0.5); used only when loss is 'cdpo'. Default DEFAULT_CDPO_EPSILON. */
  labelSmoothing?: number;
}

export interface DpoPoint {
  /** z, the log-ratio gap as the op saw it (its inputs are float32). */
  gap: number;
  /** m = β·z, the op's rewards/margins for this pair. */
  margin: number;
  /** The pair's loss ℓ. */
  loss: number;
  /** ∂ℓ/∂z (the op's gradChosen for one pair). */
  grad: number;
  /** w = −(∂ℓ/∂z)/β: how strongly a step raises y_w over y_l, per unit of β. */
  weight: number;
}

/** One pair with log-ratio gap z, scored by dpoLoss. Bad β or ε fail inside the op, by name. */
export function dpoPoint(gap: number, options: DpoCurveOptions): DpoPoint {
  const { beta, loss } = options;
  if (!(DPO_PLOT_LOSSES as readonly string[]).includes(loss)) {
    throw new RangeError(
      `dpoPoint: loss must be one of ${DPO_PLOT_LOSSES.map((l) => `'${l}'`).join(', ')}, got '${String(loss)}'`,
    );
  }
  if (!Number.isFinite(gap) || Math.abs(gap) > 1e6) {
    throw new RangeError(`dpoPoint: gap must be a finite number in [-1e6, 1e6], got ${gap}`);
  }
  const one = (x: number) => Float32Array.of(x);
  const result = dpoLoss(one(gap), one(0), one(0), one(0), {
    beta,
    lossType: loss === 'ipo' ? 'ipo' : 'sigmoid',
    labelSmoothing: loss === 'cdpo' ? (options.labelSmoothing ?? DEFAULT_CDPO_EPSILON) : 0,
  });
  const grad = result.gradChosen[0]!;
  return {
    gap: Math.fround(gap),
    margin: result.margin,
    loss: result.loss,
    grad,
    weight: -grad / beta,
  };
}

export interface DpoCurveRange {
  /** Gaps sampled: `points` values evenly spaced in [zMin, zMax]. */
  zMin?: number;
  zMax?: number;
  points?: number;
}

/** The curve over a range of gaps (default: 161 points in [−10, 10]). */
export function dpoCurve(options: DpoCurveOptions, range: DpoCurveRange = {}): DpoPoint[] {
  const { zMin = -10, zMax = 10, points = 161 } = range;
  if (!Number.isFinite(zMin) || !Number.isFinite(zMax) || !(zMin < zMax)) {
    throw new RangeError(
      `dpoCurve: zMin and zMax must be finite with zMin < zMax, got ${zMin} and ${zMax}`,
    );
  }
  if (!Number.isInteger(points) || points < 2 || points > 2000) {
    throw new RangeError(`dpoCurve: points must be an integer in [2, 2000], got ${points}`);
  }
  return Array.from({ length: points }, (_, i) =>
    dpoPoint(zMin + ((zMax - zMin) * i) / (points - 1), options),
  );
}

/**
 * Where the loss is lowest, in gap units: nowhere for DPO (it keeps falling as z grows), at
 * σ(βz) = 1 − ε for cDPO, at z = 1/(2β) for IPO. Used only to mark the plot; the tests check it
 * against the op's own gradient (zero there).
 */
export function lossMinimumGap(options: DpoCurveOptions): number | null {
  dpoPoint(0, options); // the op checks β and ε; a bad one fails here, by name
  const { beta, loss } = options;
  if (loss === 'ipo') return 1 / (2 * beta);
  if (loss === 'cdpo') {
    const eps = options.labelSmoothing ?? DEFAULT_CDPO_EPSILON;
    return eps > 0 ? Math.log((1 - eps) / eps) / beta : null;
  }
  return null;
}
