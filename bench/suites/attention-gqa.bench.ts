/**
 * Grouped-query attention (kernels/nn/attention_gqa_*.wgsl through encodeGqaAttentionForward /
 * encodeGqaAttentionBackward) against gqaAttentionForward / gqaAttentionBackward
 * (src/ops/nn/attention-gqa.ts) on SmolLM2-135M's attention shape (9 query heads, 3 kv heads,
 * head size 64) and Qwen2.5-0.5B's (14 and 2, 64): a prefill that keeps probs for a backward, a
 * batched decoding step against a KV cache without probs, and the backward.
 */
import {
  encodeGqaAttentionBackward,
  encodeGqaAttentionForward,
} from '../../src/gpu/kernels/nn/attention-gqa';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import {
  gqaAttentionBackward,
  gqaAttentionForward,
  type GqaShape,
} from '../../src/ops/nn/attention-gqa';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, runOpSuite } from './gpu-vs-cpu';

const GPU = 'attention_gqa.wgsl';
const CPU = 'CPU reference (JS, f64)';

const SMOL = { heads: 9, kvHeads: 3, headSize: 64 };
const QWEN = { heads: 14, kvHeads: 2, headSize: 64 };

type Kind = 'prefill' | 'decode' | 'backward';

interface Case {
  kind: Kind;
  model: typeof SMOL;
  batch: number;
  seq: number;
  past: number;
}

function cases(quick: boolean): Case[] {
  if (quick) {
    return [
      { kind: 'prefill', model: SMOL, batch: 1, seq: 32, past: 0 },
      { kind: 'decode', model: SMOL, batch: 8, seq: 1, past: 63 },
      { kind: 'backward', model: SMOL, batch: 1, seq: 32, past: 0 },
    ];
  }
  return [
    { kind: 'prefill', model: SMOL, batch: 1, seq: 256, past: 0 },
    { kind: 'decode', model: SMOL, batch: 64, seq: 1, past: 255 },
    { kind: 'decode', model: QWEN, batch: 64, seq: 1, past: 511 },
    { kind: 'backward', model: SMOL, batch: 2, seq: 128, past: 0 },
  ];
}

function gqaCase(c: Case): OpCase {
  const shape: GqaShape = { batch: c.batch, seq: c.seq, past: c.past, ...c.model };
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const S = c.past + T;
  const nq = B * T * NH * hs;
  const nkv = B * S * NKV * hs;
  const nprobs = B * NH * T * S;
  const seed = B * 1000 + S;
  const q = uniformF32(nq, 2, seed);
  const k = uniformF32(nkv, 2, seed + 1);
  const v = uniformF32(nkv, 2, seed + 2);
  const dout = uniformF32(nq, 1, seed + 3);
  const probs = c.kind === 'backward' ? gqaAttentionForward(q, k, v, shape).probs : undefined;
  // Each tensor once: q, k, v, out (+ probs written by a prefill); the backward reads dout, q, k,
  // v, probs and writes dq, dk, dv (dscores, its scratch, not counted).
  const bytes =
    4 *
    (c.kind === 'prefill'
      ? 2 * nq + 2 * nkv + nprobs
      : c.kind === 'decode'
        ? 2 * nq + 2 * nkv
        : 3 * nq + 4 * nkv + nprobs);
  return {
    // probs: written by the forward; bwd: the backward instead of the forward.
    shape: {
      B,
      T,
      P: c.past,
      NH,
      NKV,
      hs,
      probs: c.kind === 'decode' ? 0 : 1,
      bwd: c.kind === 'backward' ? 1 : 0,
    },
    bytes,
    cpu: () => {
      if (c.kind === 'backward') {
        const g = gqaAttentionBackward(dout, q, k, v, probs!, shape);
        return [g.dq, g.dk, g.dv];
      }
      const f = gqaAttentionForward(q, k, v, shape);
      return c.kind === 'prefill' ? [f.out, f.probs] : [f.out];
    },
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const ins = {
        q: pooled.upload(q, 'bench gqa q'),
        k: pooled.upload(k, 'bench gqa k'),
        v: pooled.upload(v, 'bench gqa v'),
      };
      if (c.kind === 'backward') {
        const buffers = {
          ...ins,
          dout: pooled.upload(dout, 'bench gqa dout'),
          probs: pooled.upload(probs!, 'bench gqa probs'),
          dscores: pooled.storage(nprobs, 'bench gqa dscores'),
          dq: pooled.storage(nq, 'bench gqa dq'),
          dk: pooled.storage(nkv, 'bench gqa dk'),
          dv: pooled.storage(nkv, 'bench gqa dv'),
        };
        return {
          encode: (batch) => encodeGqaAttentionBackward(gpu, batch, buffers, shape),
          readAll: () =>
            Promise.all([
              gpu.readF32(buffers.dq, nq),
              gpu.readF32(buffers.dk, nkv),
              gpu.readF32(buffers.dv, nkv),
            ]),
          probe: buffers.dv,
          dispose: () => pooled.release(),
        };
      }
      const out = pooled.storage(nq, 'bench gqa out');
      const probsOut = c.kind === 'prefill' ? pooled.storage(nprobs, 'bench gqa probs') : undefined;
      return {
        encode: (batch) =>
          encodeGqaAttentionForward(gpu, batch, { ...ins, out, probs: probsOut }, shape),
        readAll: async () =>
          probsOut
            ? Promise.all([gpu.readF32(out, nq), gpu.readF32(probsOut, nprobs)])
            : [await gpu.readF32(out, nq)],
        probe: out,
        dispose: () => pooled.release(),
      };
    },
  };
}

export const attentionGqaSuite: BenchSuite = {
  name: 'attention-gqa',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'attention-gqa',
      title:
        'attention-gqa: q (B, T, NH·hs), k, v (B, P + T, NKV·hs) f32 → out (+ probs), or dq, dk, dv',
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: prefill and decode are encodeGqaAttentionForward (kernels/nn/attention_gqa_forward.wgsl; lanes per row: 1 on software adapters, 32 on hardware), decode without probs; backward is encodeGqaAttentionBackward (attention_gqa_backward_scores.wgsl then attention_gqa_backward_kv.wgsl).`,
        `${CPU}: gqaAttentionForward / gqaAttentionBackward from src/ops/nn/attention-gqa.ts on the same inputs.`,
        "Shapes: SmolLM2-135M's attention (NH 9, NKV 3, hs 64): a prefill of 256, a decoding step at B 64 after 255 cached keys, a backward at B 2 T 128; Qwen2.5-0.5B's (NH 14, NKV 2, hs 64): a decoding step at B 64 after 511 keys.",
        'Bytes: each tensor once (q, k, v, out, and probs where written; backward: dout, q, k, v, probs, dq, dk, dv). The kernels read k and v once per query row, so these are not the bytes moved.',
      ],
      cases: (quick) => cases(quick).map(gqaCase),
      // The bound of tests/gpu/nn/attention-gqa.gpu.test.ts on out and probs; the backward's
      // sums grow with T, so its bound here is looser (the test's is relative to max |expected|).
      tolerance: 1e-4,
      reps: { max: 9, budgetMs: 3000 },
    }),
};
