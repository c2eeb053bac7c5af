/**
 * The Bradley–Terry loss of a reward model on preference pairs, and its gradient: the CPU
 * reference (InstructGPT, Ouyang et al. 2022, eq. 1; TRL RewardTrainer; OpenRLHF PairWiseLoss).
 * Inputs are P pairs (prompt x, chosen y_w, rejected y_l), each given as the reward model's two
 * scalar scores, shape (P):
 *
 *   P(y_w ≻ y_l | x) = σ(r(x, y_w) − r(x, y_l))            the Bradley–Terry model
 *   ℓ = −log σ(r_w − r_l − m)                               m: an optional margin (TRL `margin`)
 *   loss = mean over pairs of ℓ
 *
 * Only the difference of the two scores is trained, so a reward model's scores have no fixed
 * zero: whoever uses them as a reward normalizes them (OpenRLHF's --normalize_reward).
 *
 * Gradient, from d/dx[−log σ(x)] = σ(x) − 1 = −σ(−x), with x = r_w − r_l − m:
 *
 *   gradChosen = −σ(−x) / P,   gradRejected = +σ(−x) / P
 *
 * Statistics, as TRL logs them: accuracy = mean of [r_w > r_l] (strict), margin = mean of r_w − r_l.
 * Sums are float64; −log σ(x) is softplus(−x).
 */
import { OpInputError } from './errors';
import { sigmoid, softplus } from './logistic';
import { checkFinite, checkLength, checkRange } from './validate';

const OP = 'bradleyTerryLoss';

export interface BradleyTerryResult {
  /** Mean of the per-pair losses. */
  loss: number;
  /** (P): ∂loss/∂r(x, y_w). */
  gradChosen: Float32Array;
  /** (P): ∂loss/∂r(x, y_l). */
  gradRejected: Float32Array;
  /** Fraction of pairs the model already orders right (r_w > r_l). */
  accuracy: number;
  /** Mean of r_w − r_l. */
  margin: number;
}

export function bradleyTerryLoss(
  chosen: Float32Array, // (P) r(x, y_w)
  rejected: Float32Array, // (P) r(x, y_l)
  options: { margin?: number } = {},
): BradleyTerryResult {
  const P = chosen.length;
  if (P < 1) throw new OpInputError(OP, 'chosen', 'must hold at least 1 pair, got 0');
  checkLength(OP, 'rejected', rejected, P, 'chosen.length (one entry per pair)');
  const margin = options.margin ?? 0;
  checkRange(OP, 'margin', margin, -Infinity, Infinity, { lowOpen: true, highOpen: true });
  checkFinite(OP, 'chosen', chosen);
  checkFinite(OP, 'rejected', rejected);
  const gradChosen = new Float32Array(P);
  const gradRejected = new Float32Array(P);
  let lossSum = 0;
  let gapSum = 0;
  let wins = 0;
  // #region pair-loss
  for (let i = 0; i < P; i++) {
    const gap = chosen[i]! - rejected[i]!;
    const x = gap - margin;
    lossSum += softplus(-x);
    const pull = sigmoid(-x) / P;
    gradChosen[i] = -pull;
    gradRejected[i] = pull;
    gapSum += gap;
    if (gap > 0) wins += 1;
  }
  // #endregion pair-loss
  return { loss: lossSum / P, gradChosen, gradRejected, accuracy: wins / P, margin: gapSum / P };
}
