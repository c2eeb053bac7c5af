/**
 * The two other loss terms of a PPO step, each against its CPU reference:
 *   'kl-loss'     kernels/kl.wgsl + loss aggregation + kl_grad.wgsl (encodeKlLoss) vs klLoss(),
 *                 verl's actor KL loss (k3 'low_var_kl' with verl's clamps, token-mean);
 *   'value-loss'  kernels/value_loss.wgsl + loss aggregation (encodeValueLoss) vs valueLoss(),
 *                 verl's clipped critic loss (cliprange_value 0.5, token-mean).
 */
import { KL_STATUS_TENSORS, encodeKlLoss } from '../../src/gpu/kernels/kl';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { VALUE_LOSS_STATUS_TENSORS, encodeValueLoss } from '../../src/gpu/kernels/value-loss';
import { InputStatus } from '../../src/gpu/input-status';
import { klLoss } from '../../src/ops/kl';
import { valueLoss } from '../../src/ops/value-loss';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, responseMask, rlShapes, runOpSuite } from './gpu-vs-cpu';

const KL_GPU = 'GPU encode path';
const KL_CPU = 'CPU reference (JS, f64)';
const VALUE_GPU = 'GPU encode path';
const VALUE_CPU = 'CPU reference (JS, f64)';

function klCase(B: number, T: number): OpCase {
  const n = B * T;
  const logp = uniformF32(n, 1.5, 51 + B).map((v) => v - 1.5);
  const drift = uniformF32(n, 0.5, 52 + B);
  const refLogp = logp.map((v, i) => v + drift[i]!);
  const mask = responseMask(B, T, 53 + B);
  return {
    shape: { B, T },
    // logp, refLogp, mask in; kl, weights, grad out.
    bytes: 6 * n * 4,
    cpu: () => {
      const r = klLoss(logp, refLogp, mask, B, T);
      return [Float32Array.of(r.loss), r.kl, r.gradLogp];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'klLoss', KL_STATUS_TENSORS);
      const buffers = {
        logp: pooled.upload(logp, 'bench kl logp'),
        refLogp: pooled.upload(refLogp, 'bench kl refLogp'),
        mask: pooled.upload(mask, 'bench kl mask'),
        kl: pooled.storage(n, 'bench kl'),
        grad: pooled.storage(n, 'bench kl grad'),
        weights: pooled.storage(n, 'bench kl weights'),
        loss: pooled.storage(1, 'bench kl loss'),
        status: status.buffer,
      };
      return {
        encode: (batch) => encodeKlLoss(gpu, batch, buffers, B, T),
        readAll: () =>
          Promise.all([
            gpu.readF32(buffers.loss, 1),
            gpu.readF32(buffers.kl, n),
            gpu.readF32(buffers.grad, n),
          ]),
        probe: buffers.grad,
        dispose: () => {
          pooled.release();
          status.release();
        },
      };
    },
  };
}

function valueCase(B: number, T: number): OpCase {
  const n = B * T;
  const oldValues = uniformF32(n, 1, 61 + B);
  const step = uniformF32(n, 0.8, 62 + B);
  const vpreds = oldValues.map((v, i) => v + step[i]!);
  const returns = uniformF32(n, 2, 63 + B);
  const mask = responseMask(B, T, 64 + B);
  return {
    shape: { B, T },
    // vpreds, oldValues, returns, mask in; token loss and gradient out.
    bytes: 6 * n * 4,
    cpu: () => {
      const r = valueLoss(vpreds, oldValues, returns, mask, B, T);
      return [Float32Array.of(r.loss, r.clipfrac), r.tokenLoss, r.gradVpreds];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'valueLoss', VALUE_LOSS_STATUS_TENSORS);
      const buffers = {
        vpreds: pooled.upload(vpreds, 'bench vl vpreds'),
        oldValues: pooled.upload(oldValues, 'bench vl oldValues'),
        returns: pooled.upload(returns, 'bench vl returns'),
        mask: pooled.upload(mask, 'bench vl mask'),
        tokenLoss: pooled.storage(n, 'bench vl token loss'),
        grad: pooled.storage(n, 'bench vl grad'),
        stats: pooled.storage(2, 'bench vl stats'),
        status: status.buffer,
      };
      return {
        encode: (batch) => encodeValueLoss(gpu, batch, buffers, B, T),
        readAll: () =>
          Promise.all([
            gpu.readF32(buffers.stats, 2),
            gpu.readF32(buffers.tokenLoss, n),
            gpu.readF32(buffers.grad, n),
          ]),
        probe: buffers.stats,
        dispose: () => {
          pooled.release();
          status.release();
        },
      };
    },
  };
}

export const klLossSuite: BenchSuite = {
  name: 'kl-loss',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'kl-loss',
      title: 'KL loss (k3, verl clamps): logp, refLogp, mask (B, T) → loss, kl, ∂loss/∂logp (B, T)',
      gpuImpl: KL_GPU,
      cpuImpl: KL_CPU,
      notes: [
        `${KL_GPU}: encodeKlLoss (kernels/kl.wgsl, the loss-aggregation kernels, kl_grad.wgsl) — per-token kl and local gradient, the token-mean aggregation (weights), the gradient × weights pass; one batch.`,
        `${KL_CPU}: klLoss() from src/ops/kl.ts, verl defaults.`,
        'Bytes: logp, refLogp, mask read; kl, weights, gradient written (6·B·T·4; re-reads by later passes not counted).',
      ],
      cases: (quick) => rlShapes(quick).map(({ B, T }) => klCase(B, T)),
      tolerance: 1e-4,
      reps: { max: 7, budgetMs: 4000 },
    }),
};

export const valueLossSuite: BenchSuite = {
  name: 'value-loss',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'value-loss',
      title:
        'Value loss (clipped, verl): vpreds, oldValues, returns, mask (B, T) → loss, clipfrac, token loss, ∂loss/∂vpreds (B, T)',
      gpuImpl: VALUE_GPU,
      cpuImpl: VALUE_CPU,
      notes: [
        `${VALUE_GPU}: encodeValueLoss (kernels/value_loss.wgsl, loss_aggregation_reduce.wgsl, loss_aggregation_scale.wgsl) — one workgroup per row, a one-workgroup reduce, a per-element gradient scale; one batch.`,
        `${VALUE_CPU}: valueLoss() from src/ops/value-loss.ts, verl defaults (cliprange_value 0.5, token-mean).`,
        'Bytes: vpreds, oldValues, returns, mask read; token loss and gradient written (6·B·T·4).',
      ],
      cases: (quick) => rlShapes(quick).map(({ B, T }) => valueCase(B, T)),
      tolerance: 1e-4,
      reps: { max: 7, budgetMs: 4000 },
    }),
};
