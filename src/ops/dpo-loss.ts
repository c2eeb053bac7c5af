/**
 * The DPO loss on sequence log-probs of preference pairs, and its gradient: the CPU reference
 * (Rafailov et al. 2023; TRL DPOTrainer.dpo_loss, OpenRLHF DPOLoss). Inputs are P pairs
 * (prompt, chosen y_w, rejected y_l), each given as four sequence log-probs, shape (P):
 *
 *   z = (log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))    TRL's `logits`
 *
 *   'sigmoid'  ℓ = −(1 − ε)·log σ(β·z) − ε·log σ(−β·z)      DPO; ε > 0 is cDPO (label smoothing)
 *   'ipo'      ℓ = (z − 1/(2β))²                            IPO (Azar et al. 2023, eq. 17; β = τ)
 *
 *   loss = mean over pairs of ℓ (TRL, OpenRLHF: losses.mean()).
 *
 * Label smoothing only enters the sigmoid loss (TRL and OpenRLHF ignore it for IPO). Which
 * sequence log-probs come in is the caller's choice: TRL sums token log-probs over the completion
 * for 'sigmoid' and averages them over the completion for 'ipo'.
 *
 * Gradients with respect to the policy's sequence log-probs (the reference is frozen), from
 * d/dx[−log σ(x)] = σ(x) − 1 and d/dx[−log σ(−x)] = σ(x):
 *
 *   'sigmoid'  ∂ℓ/∂z = β·(σ(β·z) − (1 − ε))
 *   'ipo'      ∂ℓ/∂z = 2·(z − 1/(2β))
 *   gradChosen = (∂ℓ/∂z) / P,   gradRejected = −(∂ℓ/∂z) / P
 *
 * Statistics, as TRL logs them: rewards/chosen = β·(log π(y_w) − log π_ref(y_w)), rewards/rejected
 * likewise (per pair here; TRL logs their means), rewards/accuracies = mean of [chosen > rejected]
 * (strict: 0 while the policy equals the reference), rewards/margins = mean of (chosen − rejected).
 * All sums are float64; −log σ(x) is computed as softplus(−x) = max(−x, 0) + log1p(e^−|x|), which
 * neither overflows nor loses the tail.
 */
import { OpInputError } from './errors';
import { sigmoid, softplus } from './logistic';
import { checkFinite, checkLength, checkOneOf, checkRange } from './validate';

const OP = 'dpoLoss';

export const DPO_LOSS_TYPES = ['sigmoid', 'ipo'] as const;
export type DpoLossType = (typeof DPO_LOSS_TYPES)[number];

export interface DpoLossOptions {
  /**
   * TRL: beta; OpenRLHF: --beta. Temperature of the implicit reward β·log(π/π_ref) (sigmoid), or
   * IPO's regularization τ (target margin 1/(2β)). Must be > 0 (finite). Default 0.1.
   */
  beta?: number;
  /** TRL: loss_type ('sigmoid' | 'ipo'); OpenRLHF: --ipo. Default 'sigmoid'. */
  lossType?: DpoLossType;
  /**
   * TRL: label_smoothing; OpenRLHF: --label_smoothing. cDPO's probability ε that a pair's label is
   * flipped; sigmoid loss only. Must be in [0, 0.5). Default 0.
   */
  labelSmoothing?: number;
}

export const DEFAULT_DPO_LOSS_OPTIONS: Readonly<Required<DpoLossOptions>> = Object.freeze({
  beta: 0.1,
  lossType: 'sigmoid',
  labelSmoothing: 0,
});

export interface DpoLossResult {
  /** Mean of the per-pair losses. */
  loss: number;
  /** (P): ∂loss/∂(policy sequence log-prob of the chosen completion). */
  gradChosen: Float32Array;
  /** (P): ∂loss/∂(policy sequence log-prob of the rejected completion). */
  gradRejected: Float32Array;
  /** (P): β·(log π(y_w) − log π_ref(y_w)); TRL logs the mean as rewards/chosen. */
  rewardsChosen: Float32Array;
  /** (P): β·(log π(y_l) − log π_ref(y_l)); TRL logs the mean as rewards/rejected. */
  rewardsRejected: Float32Array;
  /** Fraction of pairs with rewardsChosen > rewardsRejected (TRL rewards/accuracies). */
  accuracy: number;
  /** Mean of rewardsChosen − rewardsRejected (TRL rewards/margins). */
  margin: number;
}

/** Shapes, finiteness and option ranges; shared by every caller of the op. Returns the options. */
export function checkDpoLossInput(
  policyChosen: Float32Array,
  policyRejected: Float32Array,
  refChosen: Float32Array,
  refRejected: Float32Array,
  options: DpoLossOptions = {},
): Required<DpoLossOptions> {
  const pairs = policyChosen.length;
  if (pairs < 1) throw new OpInputError(OP, 'policyChosen', 'must hold at least 1 pair, got 0');
  const what = 'policyChosen.length (one entry per pair)';
  checkLength(OP, 'policyRejected', policyRejected, pairs, what);
  checkLength(OP, 'refChosen', refChosen, pairs, what);
  checkLength(OP, 'refRejected', refRejected, pairs, what);
  const resolved = { ...DEFAULT_DPO_LOSS_OPTIONS, ...definedOnly(options) };
  checkRange(OP, 'beta', resolved.beta, 0, Infinity, { lowOpen: true, highOpen: true });
  checkOneOf(OP, 'lossType', resolved.lossType, DPO_LOSS_TYPES);
  checkRange(OP, 'labelSmoothing', resolved.labelSmoothing, 0, 0.5, { highOpen: true });
  checkFinite(OP, 'policyChosen', policyChosen);
  checkFinite(OP, 'policyRejected', policyRejected);
  checkFinite(OP, 'refChosen', refChosen);
  checkFinite(OP, 'refRejected', refRejected);
  return resolved;
}

/** The loss, its gradient with respect to the policy's log-probs, and TRL's reward statistics. */
export function dpoLoss(
  policyChosen: Float32Array, // (P) sequence log-probs under the policy
  policyRejected: Float32Array, // (P)
  refChosen: Float32Array, // (P) the same sequences under the frozen reference
  refRejected: Float32Array, // (P)
  options: DpoLossOptions = {},
): DpoLossResult {
  const {
    beta,
    lossType,
    labelSmoothing: eps,
  } = checkDpoLossInput(policyChosen, policyRejected, refChosen, refRejected, options);
  const P = policyChosen.length;
  const gradChosen = new Float32Array(P);
  const gradRejected = new Float32Array(P);
  const rewardsChosen = new Float32Array(P);
  const rewardsRejected = new Float32Array(P);
  let lossSum = 0;
  let marginSum = 0;
  let wins = 0;
  // #region pair-loss
  for (let i = 0; i < P; i++) {
    const chosenRatio = policyChosen[i]! - refChosen[i]!; // float64 from here on
    const rejectedRatio = policyRejected[i]! - refRejected[i]!;
    const z = chosenRatio - rejectedRatio;
    let loss: number;
    let dz: number;
    if (lossType === 'ipo') {
      const gap = z - 1 / (2 * beta);
      loss = gap * gap;
      dz = 2 * gap;
    } else {
      const x = beta * z;
      loss = (1 - eps) * softplus(-x) + (eps > 0 ? eps * softplus(x) : 0);
      dz = beta * (sigmoid(x) - (1 - eps));
    }
    lossSum += loss;
    gradChosen[i] = dz / P;
    gradRejected[i] = -dz / P;
    // #endregion pair-loss
    const rc = beta * chosenRatio;
    const rr = beta * rejectedRatio;
    rewardsChosen[i] = rc;
    rewardsRejected[i] = rr;
    marginSum += rc - rr;
    if (rc > rr) wins += 1;
  }
  return {
    loss: lossSum / P,
    gradChosen,
    gradRejected,
    rewardsChosen,
    rewardsRejected,
    accuracy: wins / P,
    margin: marginSum / P,
  };
}

/** Drops keys set to undefined, so they do not override the defaults. */
function definedOnly(options: DpoLossOptions): DpoLossOptions {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
}
