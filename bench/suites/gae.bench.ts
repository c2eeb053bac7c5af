/**
 * GAE (kernels/gae.wgsl through encodeGae) against its CPU reference gae() (src/ops/gae.ts), on
 * RL-shaped batches: sparse rewards (a score on each response's last token plus a small per-token
 * term), values in [−1, 1), right-padded response masks. verl defaults (γ = 1, λ = 1, 'skip').
 */
import { GAE_STATUS_TENSORS, encodeGae } from '../../src/gpu/kernels/gae';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { InputStatus } from '../../src/gpu/input-status';
import { gae } from '../../src/ops/gae';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, responseMask, rlShapes, runOpSuite } from './gpu-vs-cpu';

const GPU = 'GPU encode path';
const CPU = 'CPU reference (JS, f64)';

function gaeCase(B: number, T: number): OpCase {
  const n = B * T;
  const mask = responseMask(B, T, 11 + B);
  const rewards = uniformF32(n, 0.01, 12 + B);
  for (let b = 0; b < B; b++) {
    // The sequence score on the last response token.
    let last = b * T;
    while (last + 1 < (b + 1) * T && mask[last + 1] === 1) last++;
    rewards[last] = rewards[last]! + (b % 2 === 0 ? 1 : -1);
  }
  const values = uniformF32(n, 1, 13 + B);
  const input = { rewards, values, mask };
  return {
    shape: { B, T },
    // rewards, values, mask in; advantages, returns out.
    bytes: 5 * n * 4,
    cpu: () => {
      const { advantages, returns } = gae(input, B, T);
      return [advantages, returns];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'gae', GAE_STATUS_TENSORS);
      const buffers = {
        rewards: pooled.upload(rewards, 'bench gae rewards'),
        values: pooled.upload(values, 'bench gae values'),
        mask: pooled.upload(mask, 'bench gae mask'),
        advantages: pooled.storage(n, 'bench gae advantages'),
        returns: pooled.storage(n, 'bench gae returns'),
        status: status.buffer,
      };
      return {
        encode: (batch) => encodeGae(gpu, batch, buffers, B, T),
        readAll: () =>
          Promise.all([gpu.readF32(buffers.advantages, n), gpu.readF32(buffers.returns, n)]),
        probe: buffers.advantages,
        dispose: () => {
          pooled.release();
          status.release();
        },
      };
    },
  };
}

export const gaeSuite: BenchSuite = {
  name: 'gae',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'gae',
      title: 'GAE: rewards, values, mask (B, T) f32 → advantages, returns (B, T)',
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: encodeGae (kernels/gae.wgsl), one invocation per row scanning its T steps backward (verl defaults).`,
        `${CPU}: gae() from src/ops/gae.ts, same inputs and options.`,
        'Bytes: rewards, values, mask read, advantages and returns written (5·B·T·4).',
      ],
      cases: (quick) => rlShapes(quick).map(({ B, T }) => gaeCase(B, T)),
      tolerance: 1e-3,
      reps: { max: 7, budgetMs: 4000 },
    }),
};
