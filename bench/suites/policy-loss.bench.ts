/**
 * PPO clipped policy loss with its aggregation and gradient (kernels/policy_loss.wgsl, then
 * loss_aggregation_reduce.wgsl and loss_aggregation_scale.wgsl, through encodePolicyLoss) against
 * policyLoss() (src/ops/policy-loss.ts). verl defaults: clip 0.2, dual clip 3, log-ratio clamp 20,
 * 'token-mean'; and 'seq-mean-token-mean' (verl GSPO / Dr. GRPO-style per-sequence averaging).
 */
import {
  POLICY_LOSS_STATS_LENGTH,
  encodePolicyLoss,
  POLICY_LOSS_STATUS_TENSORS,
} from '../../src/gpu/kernels/policy-loss';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { InputStatus } from '../../src/gpu/input-status';
import type { LossAggMode } from '../../src/ops/loss-aggregation';
import { POLICY_LOSS_STATS, policyLoss } from '../../src/ops/policy-loss';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, responseMask, rlShapes, runOpSuite } from './gpu-vs-cpu';

const GPU = 'GPU encode path';
const CPU = 'CPU reference (JS, f64)';
const MODES: readonly LossAggMode[] = ['token-mean', 'seq-mean-token-mean'];

/** Token log-probs of a sampled response: logp in (−3, 0], the old policy a little off. */
function logProbs(n: number, seed: number): { logp: Float32Array; oldLogp: Float32Array } {
  const logp = uniformF32(n, 1.5, seed).map((v) => v - 1.5);
  const drift = uniformF32(n, 0.3, seed + 1);
  const oldLogp = logp.map((v, i) => v + drift[i]!);
  return { logp, oldLogp };
}

function policyLossCase(B: number, T: number, mode: LossAggMode, agg: number): OpCase {
  const n = B * T;
  const { logp, oldLogp } = logProbs(n, 41 + B);
  const advantages = uniformF32(n, 2, 43 + B);
  const mask = responseMask(B, T, 44 + B);
  const options = { aggregation: mode };
  return {
    shape: { B, T, agg },
    // logp, oldLogp, advantages, mask in; token loss and gradient out.
    bytes: 6 * n * 4,
    cpu: () => {
      const r = policyLoss(logp, oldLogp, advantages, mask, B, T, options);
      const scalars = Float32Array.from([r.loss, ...POLICY_LOSS_STATS.map((k) => r.stats[k])]);
      return [scalars, r.tokenLoss, r.gradLogp];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'policyLoss', POLICY_LOSS_STATUS_TENSORS);
      const buffers = {
        logp: pooled.upload(logp, 'bench pl logp'),
        oldLogp: pooled.upload(oldLogp, 'bench pl oldLogp'),
        advantages: pooled.upload(advantages, 'bench pl advantages'),
        mask: pooled.upload(mask, 'bench pl mask'),
        tokenLoss: pooled.storage(n, 'bench pl token loss'),
        gradLogp: pooled.storage(n, 'bench pl grad'),
        stats: pooled.storage(POLICY_LOSS_STATS_LENGTH, 'bench pl stats'),
        status: status.buffer,
      };
      return {
        encode: (batch) => encodePolicyLoss(gpu, batch, buffers, B, T, options),
        readAll: () =>
          Promise.all([
            gpu.readF32(buffers.stats, POLICY_LOSS_STATS_LENGTH),
            gpu.readF32(buffers.tokenLoss, n),
            gpu.readF32(buffers.gradLogp, n),
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

export const policyLossSuite: BenchSuite = {
  name: 'policy-loss',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'policy-loss',
      title: `PPO policy loss: logp, oldLogp, advantages, mask (B, T) → loss + 7 stats, token loss, ∂loss/∂logp (B, T); agg ${MODES.map((m, k) => `${k} = ${m}`).join(', ')}`,
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: encodePolicyLoss (kernels/policy_loss.wgsl, loss_aggregation_reduce.wgsl, loss_aggregation_scale.wgsl) — one workgroup per row (token losses, gradients, row sums), a one-workgroup reduce (loss, stats, row scales), then a per-element gradient scale; one batch.`,
        `${CPU}: policyLoss() from src/ops/policy-loss.ts, same inputs and options (verl defaults).`,
        'Bytes: logp, oldLogp, advantages, mask read once; token loss and gradient written (6·B·T·4; the gradient scale pass is not counted).',
      ],
      cases: (quick) =>
        rlShapes(quick).flatMap(({ B, T }) => MODES.map((m, k) => policyLossCase(B, T, m, k))),
      tolerance: 1e-4,
      reps: { max: 7, budgetMs: 4000 },
    }),
};
