/**
 * The two biases of the GRPO lesson on std normalization and loss aggregation, computed by the
 * real ops so the plot shows exactly what the trainer does:
 *
 *  - difficulty bias: for a group of G binary rewards with k successes, the advantage a success
 *    and a failure get from groupAdvantages (src/ops/group-advantages.ts) with the std divisor on
 *    ('group', GRPO) and off ('none', Dr. GRPO). With it on, every advantage is the Dr. GRPO one
 *    times 1/(σ + ε), and σ is smallest for groups that almost all fail or almost all succeed.
 *  - length bias: for responses of different lengths in one batch, the weight ∂loss/∂ℓ each token
 *    gets from aggregateLoss (src/ops/loss-aggregation.ts) with a unit loss on every unmasked token.
 *
 * Pure functions on small inputs; errors name the field and its valid range, and come from the ops
 * themselves where the ops check the same thing.
 */
import { groupAdvantages, type StdNormalization } from '../ops/group-advantages';
import { aggregateLoss, type LossAggMode } from '../ops/loss-aggregation';

/** The group size the lesson plots (verl rollout.n, TRL num_generations). */
export const LESSON_GROUP_SIZE = 8;

export interface GroupBiasRow {
  /** Successes in the group, 0…G. */
  k: number;
  /** Advantage of each success (reward 1); null when k = 0 (there is none). */
  success: number | null;
  /** Advantage of each failure (reward 0); null when k = G. */
  failure: number | null;
  /** σ of the group as the op used it (torch.std, unbiased: divides by G − 1). */
  std: number;
}

/**
 * One row per k = 0…G: the group is k ones then G − k zeros (order does not matter to the op),
 * scored by groupAdvantages with verl's defaults (unbiased std, ε = 1e-6) and the given
 * stdNormalization. A group with k = 0 or k = G has all rewards equal: every advantage is 0.
 */
export function groupBiasRows(
  stdNormalization: StdNormalization,
  groupSize: number = LESSON_GROUP_SIZE,
): GroupBiasRow[] {
  if (!Number.isInteger(groupSize) || groupSize < 2 || groupSize > 64) {
    throw new RangeError(
      `groupBiasRows: groupSize must be an integer in [2, 64], got ${groupSize}`,
    );
  }
  const rows: GroupBiasRow[] = [];
  for (let k = 0; k <= groupSize; k++) {
    const scores = new Float32Array(groupSize);
    scores.fill(1, 0, k);
    const { advantages, stats } = groupAdvantages(scores, groupSize, { stdNormalization });
    rows.push({
      k,
      success: k > 0 ? advantages[0]! : null,
      failure: k < groupSize ? advantages[groupSize - 1]! : null,
      std: stats.groupStd[0]!,
    });
  }
  return rows;
}

export interface TokenWeights {
  mode: LossAggMode;
  /** Tokens of each response (B). */
  lengths: number[];
  /** (B) the weight ∂loss/∂ℓ of each token of response b (all its tokens get the same). */
  perToken: number[];
  /** (B) perToken · length: how much response b counts in the loss as a whole. */
  perResponse: number[];
  /** The padded width T the batch was laid out with (the divisor of the constant modes). */
  width: number;
}

/**
 * The per-token weight of each response under one aggregation mode. The batch is (B, T) with
 * T = `width` (default: the longest response, standing in for verl's max_response_length and TRL's
 * max_completion_length, which the trainer also passes as lossScaleFactor and
 * maxCompletionLength), row b masked to its first lengths[b] tokens, every token loss 1; the
 * weights are aggregateLoss's ∂loss/∂ℓ.
 */
export function tokenWeights(
  mode: LossAggMode,
  lengths: readonly number[],
  width?: number,
): TokenWeights {
  if (lengths.length < 1 || lengths.length > 64) {
    throw new RangeError(
      `tokenWeights: lengths must hold 1 to 64 responses, got ${lengths.length}`,
    );
  }
  lengths.forEach((n, b) => {
    if (!Number.isInteger(n) || n < 1 || n > 4096) {
      throw new RangeError(`tokenWeights: lengths[${b}] must be an integer in [1, 4096], got ${n}`);
    }
  });
  const longest = Math.max(...lengths);
  const T = width ?? longest;
  if (!Number.isInteger(T) || T < longest || T > 4096) {
    throw new RangeError(
      `tokenWeights: width must be an integer in [${longest}, 4096] (the longest response), got ${T}`,
    );
  }
  const B = lengths.length;
  const loss = new Float32Array(B * T);
  const mask = new Float32Array(B * T);
  lengths.forEach((n, b) => {
    loss.fill(1, b * T, b * T + n);
    mask.fill(1, b * T, b * T + n);
  });
  const { weights } = aggregateLoss(loss, mask, B, T, {
    mode,
    lossScaleFactor: T,
    maxCompletionLength: T,
  });
  const perToken = lengths.map((_, b) => weights[b * T]!);
  return {
    mode,
    lengths: [...lengths],
    perToken,
    perResponse: perToken.map((w, b) => w * lengths[b]!),
    width: T,
  };
}

/** The framework names of each aggregation mode, for labels (as in src/ops/loss-aggregation.ts). */
export const AGG_MODE_NAMES: Readonly<Record<LossAggMode, string>> = {
  'token-mean': "verl token-mean; TRL 'bnpo' / 'dapo'",
  'seq-mean-token-mean': "verl seq-mean-token-mean; TRL 'grpo'",
  'seq-mean-token-sum': 'verl seq-mean-token-sum',
  'seq-mean-token-sum-norm': 'verl seq-mean-token-sum-norm (Dr. GRPO since v0.7.1)',
  'dr-grpo': "TRL 'dr_grpo'; verl seq-mean-token-sum-norm",
};
