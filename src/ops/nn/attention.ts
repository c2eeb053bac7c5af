/**
 * Causal multi-head self-attention (GPT-2 / llm.c layout), the CPU twin of
 * kernels/nn/attention_forward.wgsl and kernels/nn/attention_backward_{scores,grads}.wgsl.
 *
 * Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH.
 *   qkv: (B, T, 3C), the output of one linear layer; row (b, t) is [q (C) | k (C) | v (C)], and
 *        head h uses channels h·hs … (h+1)·hs − 1 of each part.
 *   s[t, u]  = q_t · k_u / √hs                      for u ≤ t (causal)
 *   P[t, u]  = exp(s[t, u] − max_u s) / Σ_u' …       over u ≤ t; 0 above the diagonal
 *   out[b, t, h·hs + i] = Σ_u P[t, u] · v_u[i]       out: (B, T, C)
 * probs P: (B, NH, T, T) is saved for the backward.
 *
 * Sums run in JS numbers (float64) for both precisions; outputs take the input's precision.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength } from '../validate';
import { attentionBackwardSimd, attentionForwardSimd } from './attention-simd';
import { type Floats, zerosLike } from './floats';
import { softmaxInPlace } from './softmax-row';

export { softmaxInPlace };

export interface AttentionShape {
  /** B, ≥ 1. */
  batch: number;
  /** T, the sequence length: 1–256 (the transformer's largest context). */
  seq: number;
  /** NH, attention heads: 1–16. */
  heads: number;
  /** C, the model width: a multiple of `heads` with head size hs = C / NH in 1–256. */
  channels: number;
}

export const ATTENTION_LIMITS = {
  /** Largest T: the decode kernel keeps one row of scores in a private array of this size. */
  maxSeq: 256,
  /** Largest head size hs (the transformer's widest head). */
  maxHeadSize: 256,
  maxHeads: 16,
} as const;

/** Checks batch/heads/channels (shared with the decode op); returns hs. */
export function checkHeads(op: string, batch: number, heads: number, channels: number): number {
  checkInt(op, 'batch', batch, 1, 2 ** 31 - 1);
  checkInt(op, 'heads', heads, 1, ATTENTION_LIMITS.maxHeads);
  checkInt(op, 'channels', channels, 1, heads * ATTENTION_LIMITS.maxHeadSize);
  if (channels % heads !== 0) {
    throw new OpInputError(
      op,
      'channels',
      `must be a multiple of heads (${heads}), got ${channels}`,
    );
  }
  return channels / heads;
}

/** Shape checks shared by the CPU ops and the GPU wrappers; returns hs = C / NH. */
export function checkAttentionShape(op: string, shape: AttentionShape): number {
  const hs = checkHeads(op, shape.batch, shape.heads, shape.channels);
  checkInt(op, 'seq', shape.seq, 1, ATTENTION_LIMITS.maxSeq);
  return hs;
}

/** Lengths of the forward's input; shared with attentionForwardGpu. */
export function checkAttentionForwardInput(qkv: Floats, shape: AttentionShape): void {
  checkAttentionShape('attentionForward', shape);
  const { batch: B, seq: T, channels: C } = shape;
  checkLength('attentionForward', 'qkv', qkv, B * T * 3 * C, `B × T × 3C = ${B} × ${T} × ${3 * C}`);
}

/** Lengths of the backward's inputs; shared with attentionBackwardGpu. */
export function checkAttentionBackwardInput(
  dout: Floats,
  qkv: Floats,
  probs: Floats,
  shape: AttentionShape,
): void {
  const op = 'attentionBackward';
  checkAttentionShape(op, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  checkLength(op, 'dout', dout, B * T * C, `B × T × C = ${B} × ${T} × ${C}`);
  checkLength(op, 'qkv', qkv, B * T * 3 * C, `B × T × 3C = ${B} × ${T} × ${3 * C}`);
  checkLength(op, 'probs', probs, B * NH * T * T, `B × NH × T × T = ${B} × ${NH} × ${T} × ${T}`);
}

/** Forward: qkv (B, T, 3C) → out (B, T, C) and probs (B, NH, T, T), zero above the diagonal. */
export function attentionForward<T extends Floats>(
  qkv: T,
  shape: AttentionShape,
  /** 'loops': the JavaScript loops even where the SIMD kernels exist (tests, benchmarks). */
  path: 'auto' | 'loops' = 'auto',
): { out: T; probs: T } {
  checkAttentionForwardInput(qkv, shape);
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const out = zerosLike(qkv, B * T * C);
  const probs = zerosLike(qkv, B * NH * T * T);
  if (path === 'loops' || !attentionForwardSimd(qkv, shape, out, probs)) {
    forwardLoops(qkv, shape, out, probs);
  }
  return { out, probs };
}

/**
 * The forward in plain JavaScript: the specification the SIMD kernels (attention-simd.ts) are
 * tested against, and the path where WebAssembly SIMD is missing.
 */
function forwardLoops<T extends Floats>(qkv: T, shape: AttentionShape, out: T, probs: T): void {
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const hs = C / NH;
  const C3 = 3 * C;
  const scale = 1 / Math.sqrt(hs);
  const row = new Float64Array(T); // scores, then probabilities, of one query row
  const mixed = new Float64Array(hs); // Σ_u P[t, u]·v_u of one query row, in float64
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      for (let t = 0; t < T; t++) {
        const q = (b * T + t) * C3 + h * hs;
        for (let u = 0; u <= t; u++) {
          const k = (b * T + u) * C3 + C + h * hs;
          let s = 0;
          for (let i = 0; i < hs; i++) s += qkv[q + i]! * qkv[k + i]!;
          row[u] = s * scale;
        }
        softmaxInPlace(row, t + 1);
        const p = ((b * NH + h) * T + t) * T;
        for (let u = 0; u <= t; u++) probs[p + u] = row[u]!;
        // u outer, i inner: v_u is read along its row, and each mixed[i] still sums over u in
        // order, so the result is the same bits as the loop the other way round.
        mixed.fill(0);
        for (let u = 0; u <= t; u++) {
          const weight = row[u]!;
          const v = (b * T + u) * C3 + 2 * C + h * hs;
          for (let i = 0; i < hs; i++) mixed[i] = mixed[i]! + weight * qkv[v + i]!;
        }
        const o = (b * T + t) * C + h * hs;
        for (let i = 0; i < hs; i++) out[o + i] = mixed[i]!;
      }
    }
  }
}

/**
 * Backward: dout (B, T, C), the forward's qkv (B, T, 3C) and probs (B, NH, T, T) → dqkv (B, T, 3C).
 *   dP[t, u] = dO_t · v_u;   dS[t, u] = P[t, u] · (dP[t, u] − Σ_u' P[t, u'] · dP[t, u'])
 *   dq_t = Σ_u dS[t, u] · k_u / √hs;   dk_u = Σ_t dS[t, u] · q_t / √hs;   dv_u = Σ_t P[t, u] · dO_t
 */
export function attentionBackward<T extends Floats>(
  dout: T,
  qkv: T,
  probs: T,
  shape: AttentionShape,
  /** 'loops': the JavaScript loops even where the SIMD kernels exist (tests, benchmarks). */
  path: 'auto' | 'loops' = 'auto',
): T {
  checkAttentionBackwardInput(dout, qkv, probs, shape);
  const acc = new Float64Array(qkv.length); // dqkv (B, T, 3C) accumulated in float64
  if (path === 'loops' || !attentionBackwardSimd(dout, qkv, probs, shape, acc)) {
    backwardLoops(dout, qkv, probs, shape, acc);
  }
  const dqkv = zerosLike(qkv, acc.length);
  dqkv.set(acc);
  return dqkv;
}

/** The backward in plain JavaScript (the specification; see forwardLoops), into acc. */
function backwardLoops(
  dout: Floats,
  qkv: Floats,
  probs: Floats,
  shape: AttentionShape,
  acc: Float64Array,
): void {
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const hs = C / NH;
  const C3 = 3 * C;
  const scale = 1 / Math.sqrt(hs);
  const dS = new Float64Array(T);
  const dq = new Float64Array(hs);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      for (let t = 0; t < T; t++) {
        const p = ((b * NH + h) * T + t) * T;
        const dO = (b * T + t) * C + h * hs;
        let rowDot = 0;
        for (let u = 0; u <= t; u++) {
          const v = (b * T + u) * C3 + 2 * C + h * hs;
          let dP = 0;
          for (let i = 0; i < hs; i++) dP += dout[dO + i]! * qkv[v + i]!;
          dS[u] = dP;
          rowDot += probs[p + u]! * dP;
        }
        const q = (b * T + t) * C3 + h * hs;
        // dq_t sums over u alone (no other t adds to it), so it is summed in a small array
        // from 0 in the same order and stored once; dk_u and dv_u gather over t in acc.
        dq.fill(0);
        for (let u = 0; u <= t; u++) {
          const P = probs[p + u]!;
          const ds = P * (dS[u]! - rowDot) * scale;
          const k = (b * T + u) * C3 + C + h * hs;
          const v = k + C;
          for (let i = 0; i < hs; i++) {
            dq[i] = dq[i]! + ds * qkv[k + i]!;
            acc[k + i] = acc[k + i]! + ds * qkv[q + i]!;
            acc[v + i] = acc[v + i]! + P * dout[dO + i]!;
          }
        }
        for (let i = 0; i < hs; i++) acc[q + i] = dq[i]!;
      }
    }
  }
}
