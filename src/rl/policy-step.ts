/**
 * One policy-gradient optimizer step of a language model, as GRPO and PPO take it: score the rows,
 * form the loss, backward, clip, AdamW.
 *
 *   L = L_pg(logp, oldLogp, A)  + β·L_KL(logp, refLogp)  − c_H·H̄  + c_V·L_V(V, oldV, R)
 *     + c_ptx·L_ptx(logp of the demonstration rows)
 *
 * with L_pg the clipped policy loss, each term aggregated over the RL rows' mask as the run's
 * loss-aggregation mode says, and L_ptx = −Σ m·logp / Σ m the supervised loss of the retained
 * task's demonstrations, which follow the RL rows in the batch (their own rows, their own mask).
 *
 * policyStepOnHost() below is the specification: it scores on the model, computes every term with
 * the ops in src/ops on the CPU, and hands ∂L/∂logp (and ∂L/∂entropy, ∂L/∂V) back to the model.
 * A model whose parameters live on the GPU implements LanguageModel.policyStep with the kernels
 * of the same ops (src/models/policy-step-gpu.ts): the log-probs never leave the GPU, and only the
 * loss statistics (and, when asked, the log-probs) are read back.
 *
 * A step is skipped — no backward, weights and optimizer untouched — when a log-prob or value of
 * the RL rows, or the total loss, is not finite. The optimizer skips a non-finite gradient itself.
 */
import type { LanguageModel } from '../models/language-model';
import type { OptimizerConfig } from '../models/optimizer';
import { klLoss, type KlLossOptions } from '../ops/kl';
import { aggregateLoss, type LossAggOptions } from '../ops/loss-aggregation';
import { axpy } from '../ops/nn/axpy';
import { policyLoss, type PolicyLossOptions, type PolicyLossStats } from '../ops/policy-loss';
import { valueLoss, type ValueLossOptions } from '../ops/value-loss';

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

/** Checks the request's shapes, so that both backends refuse the same bad input. */
export function checkPolicyStepRequest(request: PolicyStepRequest): void {
  const { rows, seq } = request;
  const n = rows * seq;
  const fail = (field: string, message: string): never => {
    throw new RangeError(`policyStep: ${field} ${message}`);
  };
  if (!Number.isInteger(rows) || rows < 1) fail('rows', `must be an integer ≥ 1, got ${rows}`);
  if (!Number.isInteger(seq) || seq < 1) fail('seq', `must be an integer ≥ 1, got ${seq}`);
  const total = request.tokens.length;
  if (total % seq !== 0 || total < n) {
    fail('tokens', `must hold R·${seq} ids with R ≥ ${rows}, got ${total}`);
  }
  if (request.targets.length !== total) fail('targets', `must match tokens (${total})`);
  const perRow: [string, Float32Array | undefined][] = [
    ['mask', request.mask],
    ['advantages', request.advantages],
    ['oldLogp', request.oldLogp],
    ['kl.refLogp', request.kl?.refLogp],
    ['value.oldValues', request.value?.oldValues],
    ['value.returns', request.value?.returns],
  ];
  for (const [field, values] of perRow) {
    if (values && values.length !== n) {
      fail(field, `must hold ${n} values (B·T), got ${values.length}`);
    }
  }
  const demos = total - n;
  if (request.ptx && request.ptx.mask.length !== demos) {
    fail(
      'ptx.mask',
      `must hold ${demos} values (the demonstration rows), got ${request.ptx.mask.length}`,
    );
  }
  if (!request.ptx && demos > 0) {
    fail(
      'tokens',
      `holds ${demos / seq} row(s) after the ${rows} RL rows, but there is no ptx term`,
    );
  }
  if (!(request.entropyCoef >= 0)) fail('entropyCoef', `must be ≥ 0, got ${request.entropyCoef}`);
}

/** The step on the model's backend: its own implementation where it has one, else on the host. */
export async function policyStep(
  model: LanguageModel,
  request: PolicyStepRequest,
): Promise<PolicyStepResult> {
  checkPolicyStepRequest(request);
  return model.policyStep ? model.policyStep(request) : policyStepOnHost(model, request);
}

/** The specification: score on the model, every loss term on the CPU, backward on the model. */
export async function policyStepOnHost(
  model: LanguageModel,
  request: PolicyStepRequest,
): Promise<PolicyStepResult> {
  const { rows: B, seq: T, mask, aggregation } = request;
  const n = B * T;
  const R = batchRows(request);
  const scored = await model.scoreTokens(
    request.tokens,
    request.targets,
    R,
    T,
    request.temperature,
  );
  const logp = scored.logp.subarray(0, n);
  const returned = request.wantLogp || !request.oldLogp ? { logp: logp.slice() } : {};
  if (!logp.every(Number.isFinite)) return { skipped: 'non-finite log-probs', ...returned };
  const values = request.value ? scored.values!.subarray(0, n) : undefined;
  if (values && !values.every(Number.isFinite)) {
    return { skipped: 'non-finite values', ...returned };
  }

  const pg = policyLoss(
    logp,
    request.oldLogp ?? logp,
    request.advantages,
    mask,
    B,
    T,
    request.policyLoss,
  );
  // ∂L/∂logp over the whole batch: the policy loss's on the RL rows, the ptx term's after them.
  const weights = ptxWeights(request);
  const dLogp = new Float32Array(R * T);
  dLogp.set(pg.gradLogp);
  if (request.ptx) axpy(request.ptx.coef, weights, dLogp);
  const losses: PolicyStepLosses = { pgLoss: pg.loss, pgStats: pg.stats, klLoss: 0, entropy: 0 };

  if (request.kl) {
    const kl = klLoss(logp, request.kl.refLogp, mask, B, T, { ...request.kl.options, aggregation });
    losses.klLoss = kl.loss;
    axpy(request.kl.coef, kl.gradLogp, dLogp.subarray(0, n));
  }
  const entropy = aggregateLoss(scored.entropy.subarray(0, n), mask, B, T, aggregation);
  losses.entropy = entropy.loss;
  let dEntropy: Float32Array | undefined;
  if (request.entropyCoef > 0) {
    dEntropy = new Float32Array(R * T);
    axpy(-request.entropyCoef, entropy.weights, dEntropy.subarray(0, n));
  }
  // #region value-loss
  let dValues: Float32Array | undefined;
  if (request.value && values) {
    const { oldValues, returns, coef, options } = request.value;
    const vl = valueLoss(values, oldValues, returns, mask, B, T, { ...options, aggregation });
    losses.vfLoss = vl.loss;
    losses.vfClipfrac = vl.clipfrac;
    dValues = new Float32Array(R * T);
    axpy(coef, vl.gradVpreds, dValues.subarray(0, n));
  }
  // #endregion value-loss
  if (request.ptx) {
    let sum = 0;
    for (let i = n; i < R * T; i++) sum += weights[i]! * scored.logp[i]!;
    losses.ptxLoss = sum;
  }
  if (!Number.isFinite(totalLoss(request, losses))) {
    return { skipped: 'non-finite loss', losses, ...returned };
  }
  await model.backwardFromLogp(dLogp, dEntropy, request.optimizer, dValues);
  return { losses, ...returned };
}
