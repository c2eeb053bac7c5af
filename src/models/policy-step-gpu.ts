/**
 * The RL loss of one policy step on the GPU: the kernels of the ops that policyStepOnHost
 * (src/rl/policy-step.ts, the specification) calls on the CPU, recorded after the forward pass
 * into the same command batch, on the log-probs, entropies and values the forward pass left on
 * the GPU. They write ∂L/∂logp, ∂L/∂entropy and ∂L/∂V for the backward pass and a few loss
 * statistics, which are all that is read back (with the log-probs of the RL rows when asked).
 *
 *   kernels/policy_loss.wgsl (+ loss_aggregation_*)  L_pg, its statistics, ∂L_pg/∂logp
 *   kernels/kl.wgsl, kl_grad.wgsl (+ loss_aggregation_*)  L_KL, ∂L_KL/∂logp
 *   kernels/loss_aggregation_*.wgsl                       H̄ and its weights ∂H̄/∂H
 *   kernels/value_loss.wgsl (+ loss_aggregation_*)        L_V, its clip fraction, ∂L_V/∂V
 *   kernels/nn/matmul.wgsl                                 L_ptx = Σ w·logp (w = −m/Σm)
 *   kernels/nn/axpy.wgsl                                   the coefficients: ∂L = Σ c_k·∂L_k
 */
import type { CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { InputStatus } from '../gpu/input-status';
import { encodeKlLoss } from '../gpu/kernels/kl';
import { encodeAggregateLoss, scratchBuffer } from '../gpu/kernels/loss-aggregation';
import { encodeAxpy } from '../gpu/kernels/nn/axpy';
import { encodeMatmul } from '../gpu/kernels/nn/matmul';
import {
  encodePolicyLoss,
  POLICY_LOSS_STATS_LENGTH,
  POLICY_LOSS_STATUS_TENSORS,
  readPolicyLossStats,
} from '../gpu/kernels/policy-loss';
import { PooledBuffers } from '../gpu/kernels/run-convenience';
import { encodeValueLoss, VALUE_LOSS_STATUS_TENSORS } from '../gpu/kernels/value-loss';
import {
  batchRows,
  ptxWeights,
  totalLoss,
  type PolicyStepLosses,
  type PolicyStepRequest,
  type PolicyStepResult,
} from './policy-step-request';

/** What the forward pass left on the GPU, and where the gradients go. All (R·T) f32. */
export interface PolicyStepBuffers {
  logp: GPUBuffer;
  entropy: GPUBuffer;
  /** The value head's V; needed with a value term. */
  values?: GPUBuffer;
  dLogp: GPUBuffer;
  dEntropy: GPUBuffer;
  dValues: GPUBuffer;
}

/** The recorded loss: read it after the batch is submitted, release it after the backward. */
export interface RecordedPolicyLoss {
  /** One sync point: the losses, whether logp and V were finite, and the log-probs if asked. */
  read(): Promise<PolicyStepResult>;
  release(): void;
}

/**
 * Records every loss term of `request` into `batch` (after the forward pass that filled
 * `buffers.logp`, `entropy` and `values`). On return the batch also holds the writes of
 * ∂L/∂logp, ∂L/∂entropy (when c_H > 0) and ∂L/∂V (with a value term); the rows past the RL
 * rows get only the ptx term's gradient.
 */
export async function encodePolicyStepLoss(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: PolicyStepBuffers,
  request: PolicyStepRequest,
): Promise<RecordedPolicyLoss> {
  const { rows: B, seq: T, aggregation } = request;
  const n = B * T;
  const total = batchRows(request) * T;
  const pooled = new PooledBuffers(gpu);
  const pgStatus = new InputStatus(gpu, 'policyStep', POLICY_LOSS_STATUS_TENSORS);
  const valueStatus = request.value
    ? new InputStatus(gpu, 'policyStep', VALUE_LOSS_STATUS_TENSORS)
    : undefined;
  const mask = pooled.upload(request.mask, 'mask');
  const scratch = (role: string) => scratchBuffer(gpu, `policy step ${role}`, n * 4);
  const out = {
    pg: pooled.storage(POLICY_LOSS_STATS_LENGTH, 'policy loss stats'),
    kl: pooled.storage(1, 'kl loss'),
    entropy: pooled.storage(1, 'entropy loss'),
    value: pooled.storage(2, 'value loss stats'),
    ptx: pooled.storage(1, 'ptx loss'),
  };

  // The behaviour log-probs: given, or a copy of this pass's (the ratio is then exactly 1).
  let oldLogp: GPUBuffer;
  if (request.oldLogp) oldLogp = pooled.upload(request.oldLogp, 'old logp');
  else {
    oldLogp = pooled.storage(n, 'old logp');
    batch.copy(buffers.logp, oldLogp, n * 4);
  }
  // The demonstrations' rows hold only the ptx gradient, added below: start from zeros.
  if (request.ptx) batch.clear(buffers.dLogp, total * 4);
  await encodePolicyLoss(
    gpu,
    batch,
    {
      logp: buffers.logp,
      oldLogp,
      advantages: pooled.upload(request.advantages, 'advantages'),
      mask,
      tokenLoss: scratch('token loss'),
      gradLogp: buffers.dLogp,
      stats: out.pg,
      status: pgStatus.buffer,
    },
    B,
    T,
    request.policyLoss,
  );

  if (request.kl) {
    const grad = scratch('kl grad');
    await encodeKlLoss(
      gpu,
      batch,
      {
        logp: buffers.logp,
        refLogp: pooled.upload(request.kl.refLogp, 'ref logp'),
        mask,
        kl: scratch('kl'),
        grad,
        loss: out.kl,
        weights: scratch('kl weights'),
      },
      B,
      T,
      { ...request.kl.options, aggregation },
    );
    await encodeAxpy(gpu, batch, { x: grad, y: buffers.dLogp }, n, request.kl.coef);
  }

  const entropyWeights = scratch('entropy weights');
  await encodeAggregateLoss(
    gpu,
    batch,
    { tokenLoss: buffers.entropy, mask, loss: out.entropy, weights: entropyWeights },
    B,
    T,
    aggregation,
  );
  if (request.entropyCoef > 0) {
    batch.clear(buffers.dEntropy, total * 4);
    const x = entropyWeights;
    await encodeAxpy(gpu, batch, { x, y: buffers.dEntropy }, n, -request.entropyCoef);
  }

  if (request.value) {
    if (!buffers.values) throw new Error('policyStep: a value term needs the value head');
    const grad = scratch('value grad');
    await encodeValueLoss(
      gpu,
      batch,
      {
        vpreds: buffers.values,
        oldValues: pooled.upload(request.value.oldValues, 'old values'),
        returns: pooled.upload(request.value.returns, 'returns'),
        mask,
        tokenLoss: scratch('value token loss'),
        grad,
        stats: out.value,
        status: valueStatus!.buffer,
      },
      B,
      T,
      { ...request.value.options, aggregation },
    );
    batch.clear(buffers.dValues, total * 4);
    await encodeAxpy(gpu, batch, { x: grad, y: buffers.dValues }, n, request.value.coef);
  }

  if (request.ptx) {
    const weights = pooled.upload(ptxWeights(request), 'ptx weights');
    // (1, R·T) × (R·T, 1): Σ w·logp, the rows before the demonstrations weighing 0.
    await encodeMatmul(
      gpu,
      batch,
      { a: weights, b: buffers.logp, out: out.ptx },
      {
        m: 1,
        k: total,
        n: 1,
      },
    );
    await encodeAxpy(gpu, batch, { x: weights, y: buffers.dLogp }, total, request.ptx.coef);
  }

  const wantLogp = request.wantLogp || !request.oldLogp;
  return {
    async read() {
      const [pg, kl, entropy, value, ptx, logp, pgBad, valueBad] = await Promise.all([
        gpu.readF32(out.pg, POLICY_LOSS_STATS_LENGTH),
        gpu.readF32(out.kl, 1),
        gpu.readF32(out.entropy, 1),
        gpu.readF32(out.value, 2),
        gpu.readF32(out.ptx, 1),
        wantLogp ? gpu.readF32(buffers.logp, n) : undefined,
        pgStatus.counts(),
        valueStatus?.counts(),
      ]);
      const returned = logp ? { logp } : {};
      // Slot 0 of each status is the tensor the model produced: logp, and V.
      if (pgBad[0]! > 0) return { skipped: 'non-finite log-probs', ...returned };
      if (valueBad && valueBad[0]! > 0) return { skipped: 'non-finite values', ...returned };
      const { loss: pgLoss, stats: pgStats } = readPolicyLossStats(pg);
      const losses: PolicyStepLosses = {
        pgLoss,
        pgStats,
        klLoss: request.kl ? kl[0]! : 0,
        entropy: entropy[0]!,
        ...(request.value ? { vfLoss: value[0]!, vfClipfrac: value[1]! } : {}),
        ...(request.ptx ? { ptxLoss: ptx[0]! } : {}),
      };
      if (!Number.isFinite(totalLoss(request, losses))) {
        return { skipped: 'non-finite loss', losses, ...returned };
      }
      return { losses, ...returned };
    },
    release() {
      pooled.release();
      pgStatus.release();
      valueStatus?.release();
    },
  };
}
