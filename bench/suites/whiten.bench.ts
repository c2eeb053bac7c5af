/**
 * Masked whitening of token advantages (kernels/whiten_stats.wgsl `partial` + `merge`, then
 * kernels/whiten_apply.wgsl, through encodeWhiten) against whiten() (src/ops/whiten.ts): what
 * verl / TRL / OpenRLHF apply to GAE and REINFORCE++ advantages over every response token.
 */
import { WHITEN_STATS_LENGTH, encodeWhiten, whitenChunks } from '../../src/gpu/kernels/whiten';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { InputStatus } from '../../src/gpu/input-status';
import { whiten } from '../../src/ops/whiten';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, responseMask, rlShapes, runOpSuite } from './gpu-vs-cpu';

const GPU = 'GPU encode path';
const CPU = 'CPU reference (JS, f64)';

function whitenCase(B: number, T: number): OpCase {
  const n = B * T;
  // Advantages of GAE-like scale, off-centre so the mean matters.
  const x = uniformF32(n, 2, 31 + B).map((v) => v + 0.5);
  const mask = responseMask(B, T, 32 + B);
  return {
    shape: { B, T },
    // x and mask read twice (stats, apply), out written once.
    bytes: 5 * n * 4,
    cpu: () => [whiten(x, mask, B, T).output],
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'whiten', ['x']);
      const buffers = {
        x: pooled.upload(x, 'bench whiten x'),
        mask: pooled.upload(mask, 'bench whiten mask'),
        partials: pooled.storage(whitenChunks(n) * 5, 'bench whiten partials'),
        stats: pooled.storage(WHITEN_STATS_LENGTH, 'bench whiten stats'),
        out: pooled.storage(n, 'bench whiten out'),
        status: status.buffer,
      };
      return {
        encode: (batch) => encodeWhiten(gpu, batch, buffers, B, T),
        readAll: async () => [await gpu.readF32(buffers.out, n)],
        probe: buffers.out,
        dispose: () => {
          pooled.release();
          status.release();
        },
      };
    },
  };
}

export const whitenSuite: BenchSuite = {
  name: 'whiten',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'whiten',
      title: 'whiten: token advantages x, mask (B, T) f32 → masked-whitened (B, T)',
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: encodeWhiten (kernels/whiten_stats.wgsl, whiten_apply.wgsl) — masked moments in chunks of 4096 and a one-workgroup merge, then one invocation per element (verl defaults: unbiased, rsqrt(var + 1e-8)).`,
        `${CPU}: whiten() from src/ops/whiten.ts (two passes in f64), same inputs and options.`,
        'Bytes: x and mask read twice (stats, apply), the output written once (5·B·T·4).',
      ],
      cases: (quick) => rlShapes(quick).map(({ B, T }) => whitenCase(B, T)),
      tolerance: 1e-4,
      reps: { max: 7, budgetMs: 4000 },
    }),
};
