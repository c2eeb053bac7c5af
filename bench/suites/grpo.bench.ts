/**
 * GRPO outcome advantages to tokens: group advantages (kernels/group_advantages.wgsl through
 * encodeGroupAdvantages) then broadcast over each response's tokens (kernels/broadcast_tokens.wgsl),
 * against groupAdvantages() + broadcastToTokens() on the CPU. Scores are 0/1 correctness with a
 * little noise (some groups all-equal, as in RLVR batches); groups of G = 8 contiguous samples.
 */
import { encodeBroadcastToTokens } from '../../src/gpu/kernels/broadcast';
import { GROUP_STATS_STRIDE, encodeGroupAdvantages } from '../../src/gpu/kernels/group-advantages';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { InputStatus } from '../../src/gpu/input-status';
import { broadcastToTokens } from '../../src/ops/broadcast';
import { groupAdvantages } from '../../src/ops/group-advantages';
import { seededRandom } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, responseMask, rlShapes, runOpSuite } from './gpu-vs-cpu';

const GPU = 'GPU encode path';
const CPU = 'CPU reference (JS, f64)';
const G = 8;

/** 0/1 scores; every fourth group is all-correct (zero std), the rest mixed. */
function rlvrScores(B: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const scores = new Float32Array(B);
  for (let i = 0; i < B; i++) {
    scores[i] = Math.floor(i / G) % 4 === 3 ? 1 : next() < 0.5 ? 1 : 0;
  }
  return scores;
}

function grpoCase(B: number, T: number): OpCase {
  const n = B * T;
  const groups = B / G;
  const scores = rlvrScores(B, 21 + B);
  const mask = responseMask(B, T, 22 + B);
  return {
    shape: { B, T, G },
    // scores and mask in; advantages (B), group stats and token advantages (B, T) out.
    bytes: (B + n + B + groups * GROUP_STATS_STRIDE + n) * 4,
    cpu: () => {
      const { advantages, stats } = groupAdvantages(scores, G);
      return [
        advantages,
        stats.groupMean,
        stats.groupStd,
        broadcastToTokens(advantages, mask, B, T),
      ];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const status = new InputStatus(gpu, 'groupAdvantages', ['scores']);
      const buffers = {
        scores: pooled.upload(scores, 'bench grpo scores'),
        mask: pooled.upload(mask, 'bench grpo mask'),
        advantages: pooled.storage(B, 'bench grpo advantages'),
        groupStats: pooled.storage(groups * GROUP_STATS_STRIDE, 'bench grpo group stats'),
        tokens: pooled.storage(n, 'bench grpo token advantages'),
        status: status.buffer,
      };
      return {
        encode: async (batch) => {
          await encodeGroupAdvantages(gpu, batch, buffers, B, G);
          await encodeBroadcastToTokens(
            gpu,
            batch,
            {
              seqValues: buffers.advantages,
              mask: buffers.mask,
              out: buffers.tokens,
              status: status.buffer,
            },
            B,
            T,
          );
        },
        readAll: async () => {
          const [advantages, words, tokens] = await Promise.all([
            gpu.readF32(buffers.advantages, B),
            gpu.readF32(buffers.groupStats, groups * GROUP_STATS_STRIDE),
            gpu.readF32(buffers.tokens, n),
          ]);
          const mean = new Float32Array(groups);
          const std = new Float32Array(groups);
          for (let k = 0; k < groups; k++) {
            mean[k] = words[k * GROUP_STATS_STRIDE]!;
            std[k] = words[k * GROUP_STATS_STRIDE + 1]!;
          }
          return [advantages, mean, std, tokens];
        },
        probe: buffers.tokens,
        dispose: () => {
          pooled.release();
          status.release();
        },
      };
    },
  };
}

export const grpoSuite: BenchSuite = {
  name: 'grpo',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'grpo',
      title:
        'GRPO: scores (B) in groups of G → advantages (B), group stats, token advantages (B, T)',
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: encodeGroupAdvantages (kernels/group_advantages.wgsl, one invocation per group, verl defaults: σ unbiased, ε = 1e-6) then encodeBroadcastToTokens (kernels/broadcast_tokens.wgsl, one invocation per token), one batch.`,
        `${CPU}: groupAdvantages() then broadcastToTokens(), same inputs and options.`,
        'Bytes: scores and mask read; advantages, group stats (3 f32 per group) and token advantages written.',
      ],
      cases: (quick) => rlShapes(quick).map(({ B, T }) => grpoCase(B, T)),
      tolerance: 1e-5,
      reps: { max: 7, budgetMs: 4000 },
    }),
};
