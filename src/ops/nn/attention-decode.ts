/**
 * One decoding step of causal multi-head attention with a KV cache, the CPU twin of
 * kernels/nn/attention_decode.wgsl. Every sequence of the batch is at the same position `pos` (the
 * sampler feeds prompts token by token).
 *
 * Shapes: B = batch, C = channels, NH = heads, hs = C / NH, S = maxSeq.
 *   qkvStep: (B, 3C)            the qkv row of position `pos` of each sequence, [q | k | v]
 *   kCache, vCache: (B, NH, S, hs)  k and v of positions 0 … S − 1 per head
 *   out: (B, C)                  attention of q at `pos` over the cached positions 0 … pos
 * Equals row `pos` of attentionForward's out when positions 0 … pos − 1 went through here first.
 */
import { checkInt, checkLength } from '../validate';
import { ATTENTION_LIMITS, checkHeads, softmaxInPlace } from './attention';
import { type Floats, zerosLike } from './floats';

export interface DecodeShape {
  /** B, ≥ 1. */
  batch: number;
  /** NH, attention heads: 1–16. */
  heads: number;
  /** C, the model width: a multiple of `heads` with head size hs = C / NH in 1–256. */
  channels: number;
  /** S, positions the caches hold: 1–256. */
  maxSeq: number;
}

const OP = 'attentionDecode';

/** Shape checks shared with the GPU wrapper; returns hs = C / NH. */
export function checkDecodeShape(shape: DecodeShape, pos: number): number {
  const hs = checkHeads(OP, shape.batch, shape.heads, shape.channels);
  checkInt(OP, 'maxSeq', shape.maxSeq, 1, ATTENTION_LIMITS.maxSeq);
  checkInt(OP, 'pos', pos, 0, shape.maxSeq - 1);
  return hs;
}

/** Lengths of the decode's inputs; shared with attentionDecodeGpu. */
export function checkAttentionDecodeInput(
  qkvStep: Floats,
  kCache: Floats,
  vCache: Floats,
  pos: number,
  shape: DecodeShape,
): void {
  const hs = checkDecodeShape(shape, pos);
  const { batch: B, heads: NH, channels: C, maxSeq: S } = shape;
  checkLength(OP, 'qkvStep', qkvStep, B * 3 * C, `B × 3C = ${B} × ${3 * C}`);
  const what = `B × NH × maxSeq × hs = ${B} × ${NH} × ${S} × ${hs}`;
  checkLength(OP, 'kCache', kCache, B * NH * S * hs, what);
  checkLength(OP, 'vCache', vCache, B * NH * S * hs, what);
}

/**
 * Writes k and v of `pos` from qkvStep into the caches (in place), then returns out (B, C): the
 * attention of q at `pos` over cached positions 0 … pos.
 */
export function attentionDecode<T extends Floats>(
  qkvStep: T,
  kCache: T,
  vCache: T,
  pos: number,
  shape: DecodeShape,
): T {
  checkAttentionDecodeInput(qkvStep, kCache, vCache, pos, shape);
  const { batch: B, heads: NH, channels: C, maxSeq: S } = shape;
  const hs = C / NH;
  const scale = 1 / Math.sqrt(hs);
  const out = zerosLike(qkvStep, B * C);
  const row = new Float64Array(pos + 1);
  const mixed = new Float64Array(hs); // Σ_u P[u]·v_u of one head, in float64
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const q = b * 3 * C + h * hs;
      const cache = (b * NH + h) * S * hs; // kCache/vCache[b, h, 0, 0]
      for (let i = 0; i < hs; i++) {
        kCache[cache + pos * hs + i] = qkvStep[q + C + i]!;
        vCache[cache + pos * hs + i] = qkvStep[q + 2 * C + i]!;
      }
      // Same arithmetic, in the same order, as attentionForward's row `pos`.
      for (let u = 0; u <= pos; u++) {
        let s = 0;
        for (let i = 0; i < hs; i++) s += qkvStep[q + i]! * kCache[cache + u * hs + i]!;
        row[u] = s * scale;
      }
      softmaxInPlace(row, pos + 1);
      // u outer, as in attentionForward: each mixed[i] sums over u in order.
      mixed.fill(0);
      for (let u = 0; u <= pos; u++) {
        const weight = row[u]!;
        const v = cache + u * hs;
        for (let i = 0; i < hs; i++) mixed[i] = mixed[i]! + weight * vCache[v + i]!;
      }
      for (let i = 0; i < hs; i++) out[b * C + h * hs + i] = mixed[i]!;
    }
  }
  return out;
}
