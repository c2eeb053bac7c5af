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
 * loss statistics (and, when asked, the log-probs) are read back. The request, the result and the
 * arithmetic both paths share (the ptx weights, the total loss) are in
 * src/models/policy-step-request.ts, below the models that implement them.
 *
 * A step is skipped — no backward, weights and optimizer untouched — when a log-prob or value of
 * the RL rows, or the total loss, is not finite. The optimizer skips a non-finite gradient itself.
 */
import type { LanguageModel } from '../models/language-model';
import {
  batchRows,
  ptxWeights,
  totalLoss,
  type PolicyStepLosses,
  type PolicyStepRequest,
  type PolicyStepResult,
} from '../models/policy-step-request';
import { klLoss } from '../ops/kl';
import { aggregateLoss } from '../ops/loss-aggregation';
import { axpy } from '../ops/nn/axpy';
import { policyLoss } from '../ops/policy-loss';
import { valueLoss } from '../ops/value-loss';

// The step's callers take its request and result from here, with the step.
export type { PolicyStepLosses, PolicyStepRequest, PolicyStepResult };

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
