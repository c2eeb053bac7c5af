/**
 * What a policy step asks of a language model and what it gets back (src/rl/policy-step.ts takes
 * the step; a model may take it itself through LanguageModel.policyStep), with the arithmetic both
 * backends share: the batch's rows, the ptx weights and the total loss from its terms. It lives
 * here, below rl, because the models implement it.
 */
import type { KlLossOptions } from '../ops/kl';
import type { LossAggOptions } from '../ops/loss-aggregation';
import type { PolicyLossOptions, PolicyLossStats } from '../ops/policy-loss';
import type { ValueLossOptions } from '../ops/value-loss';
import type { OptimizerConfig } from './optimizer';

export interface PolicyStepRequest {
  /** (R·T) inputs and next-token targets of the R = rows + ptx rows; the RL rows come first. */
  tokens: Int32Array;
  targets: Int32Array;
  /** B: the RL rows, the first B of the batch. */
  rows: number;
  /** T: positions per row. */
  seq: number;
  /** Logits are divided by it before the log-softmax (the rollout temperature). */
  temperature: number;
  /** (B·T) 0/1: the generated tokens the loss sees. */
  mask: Float32Array;
  /** (B·T) per-token advantages. */
  advantages: Float32Array;
  /** (B·T) the behaviour policy's log-probs; omitted: this pass's own (ratio 1, the first of μ). */
  oldLogp?: Float32Array;
  /** Clip bounds, loss type and aggregation of the policy loss. */
  policyLoss: PolicyLossOptions;
  /** How the KL, entropy and value terms are aggregated (the run's loss-aggregation mode). */
  aggregation: LossAggOptions;
  /** The KL-in-the-loss term: coef·aggregate(KL(π ‖ π_ref)) over the mask. */
  kl?: { refLogp: Float32Array; coef: number; options: Omit<KlLossOptions, 'aggregation'> };
  /** c_H ≥ 0: subtracts c_H times the aggregated entropy (it is always measured). */
  entropyCoef: number;
  /** The critic's term (PPO with a value head): coef·L_V. oldValues, returns: (B·T). */
  value?: {
    oldValues: Float32Array;
    returns: Float32Array;
    coef: number;
    options: Omit<ValueLossOptions, 'aggregation'>;
  };
  /** The ptx term over rows B … R−1: mask ((R−B)·T) 0/1, coef > 0. */
  ptx?: { mask: Float32Array; coef: number };
  optimizer: OptimizerConfig;
  /** Return this pass's log-probs of the RL rows (they are returned anyway without oldLogp). */
  wantLogp?: boolean;
}

/** Each term before its coefficient, as verl and TRL log them. */
export interface PolicyStepLosses {
  pgLoss: number;
  pgStats: PolicyLossStats;
  /** aggregate(KL); 0 without a KL term. */
  klLoss: number;
  /** aggregate(entropy) of the RL rows (actor/entropy). */
  entropy: number;
  vfLoss?: number;
  vfClipfrac?: number;
  ptxLoss?: number;
}

export interface PolicyStepResult {
  /** Why the step was skipped before its backward; undefined when it ran. */
  skipped?: 'non-finite log-probs' | 'non-finite values' | 'non-finite loss';
  /** Undefined when the log-probs or values were not finite (no loss was formed). */
  losses?: PolicyStepLosses;
  /** (B·T) this pass's log-probs of the RL rows, when asked for or without oldLogp. */
  logp?: Float32Array;
}

/** R, the rows of the whole batch: the RL rows and the demonstrations after them. */
export function batchRows(request: PolicyStepRequest): number {
  return request.tokens.length / request.seq;
}

/** The total loss from its terms and the request's coefficients. */
export function totalLoss(request: PolicyStepRequest, losses: PolicyStepLosses): number {
  return (
    losses.pgLoss +
    (request.kl ? request.kl.coef * losses.klLoss : 0) -
    request.entropyCoef * losses.entropy +
    (request.value ? request.value.coef * losses.vfLoss! : 0) +
    (request.ptx ? request.ptx.coef * losses.ptxLoss! : 0)
  );
}

/**
 * The ptx term's weights over the whole batch: 0 on the RL rows, −m/Σm on the demonstrations,
 * so that L_ptx = Σ w·logp and ∂(c·L_ptx)/∂logp = c·w. (R·T).
 */
// #region ptx-weights
export function ptxWeights(request: PolicyStepRequest): Float32Array {
  const n = request.rows * request.seq;
  const weights = new Float32Array(request.tokens.length);
  if (!request.ptx) return weights;
  let count = 0;
  for (const m of request.ptx.mask) count += m;
  if (count === 0) return weights;
  request.ptx.mask.forEach((m, i) => {
    if (m !== 0) weights[n + i] = -m / count;
  });
  return weights;
}
// #endregion ptx-weights
