/**
 * Causal grouped-query self-attention (GQA) as Llama, Qwen2 and Qwen3 use it: NKV key/value heads
 * serve NH query heads, query head h reading kv head ⌊h / (NH / NKV)⌋; the head size hs is its
 * own number (Qwen3 sets head_dim apart from hidden / heads). NKV = NH is multi-head attention,
 * NKV = 1 multi-query attention.
 *
 * Beside src/ops/nn/attention.ts rather than inside it: that op takes the tiny GPT's fused
 * qkv (B, T, 3C) with hs = C / NH, its limits (T ≤ 256, NH ≤ 16) are its decode kernel's, and its
 * checks and WebAssembly SIMD kernels are shared with the GPU wrappers of that layout; here q, k
 * and v come from three projections (as Hugging Face's q_proj, k_proj, v_proj and their LoRA
 * adapters) with different widths, and contexts are longer.
 *
 * Shapes: B = batch, T = queries per sequence, P = past (keys cached before the first query),
 * S = P + T keys, NH = heads, NKV = kvHeads, G = NH / NKV, hs = headSize.
 *   q: (B, T, NH·hs)     row (b, t) sits at position P + t; head h is channels h·hs … (h+1)·hs − 1
 *   k, v: (B, S, NKV·hs) rows 0 … S − 1 are positions 0 … S − 1
 *   s[t, u]  = q_t,h · k_u,⌊h/G⌋ / √hs                    for u ≤ P + t (causal)
 *   P[t, u]  = softmax_u s[t, u] over u ≤ P + t; 0 after
 *   out[b, t, h·hs + i] = Σ_u P[t, u] · v_u,⌊h/G⌋[i]       out: (B, T, NH·hs)
 * probs: (B, NH, T, S) is saved for the backward. P = 0 is the teacher-forced pass over a whole
 * sequence; P > 0 with k and v the cache plus the new rows is decoding (T = 1) or a chunked prefill.
 * With `pasts` the forward gives each sequence b its own past P_b ≤ P (prompts of different
 * lengths decoding in one batch): its row t sits at P_b + t and reads keys u ≤ P_b + t; keys
 * after that, up to S − 1, are not read (a KV cache's rows not yet written).
 *
 * Sums run in JS numbers (float64) for both precisions; outputs take the input's precision.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength } from '../validate';
import { checkPasts } from './kv-cache';
import { type Floats, zerosLike } from './floats';
import { softmaxInPlace } from './softmax-row';

export interface GqaShape {
  /** B, ≥ 1. */
  batch: number;
  /** T, query rows per sequence, ≥ 1. */
  seq: number;
  /** P, keys before the first query (a KV cache's length), ≥ 0. Default 0. */
  past?: number;
  /**
   * The forward only: each sequence's own past (B values, each 0 … P), P being their largest;
   * none: P for every sequence.
   */
  pasts?: readonly number[] | undefined;
  /** NH, query heads (num_attention_heads). */
  heads: number;
  /** NKV, key/value heads (num_key_value_heads); divides NH. */
  kvHeads: number;
  /** hs, channels per head (head_dim). */
  headSize: number;
}

export const GQA_LIMITS = {
  /** Most heads (ModelSpec's limit). */
  maxHeads: 256,
  /** Largest head size (ModelSpec's headDim limit). */
  maxHeadSize: 1024,
  /** Most keys S = P + T (ModelSpec's context limit). */
  maxKeys: 2 ** 17,
} as const;

/** Largest array: flat indices stay below 2^31 like the other nn ops. */
const MAX_ELEMENTS = 2 ** 31 - 1;

/** Shape checks shared by the CPU ops and a GPU wrapper; returns P (past, default filled in). */
export function checkGqaShape(op: string, shape: GqaShape): number {
  const past = shape.past ?? 0;
  checkInt(op, 'batch', shape.batch, 1, MAX_ELEMENTS);
  checkInt(op, 'heads', shape.heads, 1, GQA_LIMITS.maxHeads);
  checkInt(op, 'kvHeads', shape.kvHeads, 1, shape.heads);
  if (shape.heads % shape.kvHeads !== 0) {
    throw new OpInputError(
      op,
      'kvHeads',
      `must divide heads (${shape.heads}) for grouped-query attention, got ${shape.kvHeads}`,
    );
  }
  checkInt(op, 'headSize', shape.headSize, 1, GQA_LIMITS.maxHeadSize);
  checkInt(op, 'seq', shape.seq, 1, GQA_LIMITS.maxKeys);
  checkInt(op, 'past', past, 0, GQA_LIMITS.maxKeys - shape.seq);
  if (shape.pasts !== undefined) checkPasts(op, shape.pasts, shape.batch, past);
  const probs = shape.batch * shape.heads * shape.seq * (past + shape.seq);
  const keys = shape.batch * (past + shape.seq) * shape.kvHeads * shape.headSize;
  const queries = shape.batch * shape.seq * shape.heads * shape.headSize;
  if (Math.max(probs, keys, queries) > MAX_ELEMENTS) {
    throw new OpInputError(
      op,
      'batch',
      `makes a tensor of ${Math.max(probs, keys, queries)} elements (max 2^31 − 1)`,
    );
  }
  return past;
}

function sizes(shape: GqaShape, past: number): { q: number; kv: number; probs: number } {
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const S = past + T;
  return { q: B * T * NH * hs, kv: B * S * NKV * hs, probs: B * NH * T * S };
}

/** Lengths of the forward's inputs; shared with a GPU wrapper. Returns P. */
export function checkGqaForwardInput(q: Floats, k: Floats, v: Floats, shape: GqaShape): number {
  const op = 'gqaAttentionForward';
  const past = checkGqaShape(op, shape);
  const n = sizes(shape, past);
  checkLength(op, 'q', q, n.q, 'B × T × NH·hs');
  checkLength(op, 'k', k, n.kv, 'B × (past + T) × NKV·hs');
  checkLength(op, 'v', v, n.kv, 'B × (past + T) × NKV·hs');
  return past;
}

/** Lengths of the backward's inputs; shared with a GPU wrapper. Returns P. */
export function checkGqaBackwardInput(
  dout: Floats,
  q: Floats,
  k: Floats,
  v: Floats,
  probs: Floats,
  shape: GqaShape,
): number {
  const op = 'gqaAttentionBackward';
  const past = checkGqaShape(op, shape);
  if (shape.pasts !== undefined) {
    throw new OpInputError(op, 'pasts', 'are for decoding; the backward takes one past for all');
  }
  const n = sizes(shape, past);
  checkLength(op, 'dout', dout, n.q, 'B × T × NH·hs');
  checkLength(op, 'q', q, n.q, 'B × T × NH·hs');
  checkLength(op, 'k', k, n.kv, 'B × (past + T) × NKV·hs');
  checkLength(op, 'v', v, n.kv, 'B × (past + T) × NKV·hs');
  checkLength(op, 'probs', probs, n.probs, 'B × NH × T × (past + T)');
  return past;
}

/** Forward: q, k, v → out (B, T, NH·hs) and probs (B, NH, T, S), zero after each row's key. */
export function gqaAttentionForward<T extends Floats>(
  q: T,
  k: T,
  v: T,
  shape: GqaShape,
): { out: T; probs: T } {
  const past = checkGqaForwardInput(q, k, v, shape);
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const S = past + T;
  const group = NH / NKV;
  const qWidth = NH * hs;
  const kvWidth = NKV * hs;
  const scale = 1 / Math.sqrt(hs);
  const out = zerosLike(q, B * T * qWidth);
  const probs = zerosLike(q, B * NH * T * S);
  const row = new Float64Array(S); // scores, then probabilities, of one query row
  const mixed = new Float64Array(hs); // Σ_u P[t, u]·v_u of one query row, in float64
  for (let b = 0; b < B; b++) {
    const ownPast = shape.pasts?.[b] ?? past;
    for (let h = 0; h < NH; h++) {
      const kvHead = Math.floor(h / group) * hs;
      for (let t = 0; t < T; t++) {
        const last = ownPast + t; // the query's own position: the last key it may read
        const qo = (b * T + t) * qWidth + h * hs;
        for (let u = 0; u <= last; u++) {
          const ko = (b * S + u) * kvWidth + kvHead;
          let s = 0;
          for (let i = 0; i < hs; i++) s += q[qo + i]! * k[ko + i]!;
          row[u] = s * scale;
        }
        softmaxInPlace(row, last + 1);
        const p = ((b * NH + h) * T + t) * S;
        for (let u = 0; u <= last; u++) probs[p + u] = row[u]!;
        mixed.fill(0);
        for (let u = 0; u <= last; u++) {
          const weight = row[u]!;
          const vo = (b * S + u) * kvWidth + kvHead;
          for (let i = 0; i < hs; i++) mixed[i] = mixed[i]! + weight * v[vo + i]!;
        }
        for (let i = 0; i < hs; i++) out[qo + i] = mixed[i]!;
      }
    }
  }
  return { out, probs };
}

/**
 * Backward: dout (B, T, NH·hs) and the forward's q, k, v, probs → dq (B, T, NH·hs) and
 * dk, dv (B, S, NKV·hs). Per query head h with kv head j = ⌊h/G⌋:
 *   dP[t, u] = dO_t · v_u;   dS[t, u] = P[t, u] · (dP[t, u] − Σ_u' P[t, u'] · dP[t, u'])
 *   dq_t = Σ_u dS[t, u] · k_u / √hs
 *   dk_u,j = Σ_{h in group j} Σ_t dS[t, u] · q_t,h / √hs;   dv_u,j = Σ_{h in group j} Σ_t P[t, u] · dO_t,h
 * Cached keys (u < P) get their gradients too: a caller that froze them ignores those rows.
 */
export function gqaAttentionBackward<T extends Floats>(
  dout: T,
  q: T,
  k: T,
  v: T,
  probs: T,
  shape: GqaShape,
): { dq: T; dk: T; dv: T } {
  const past = checkGqaBackwardInput(dout, q, k, v, probs, shape);
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const S = past + T;
  const group = NH / NKV;
  const qWidth = NH * hs;
  const kvWidth = NKV * hs;
  const scale = 1 / Math.sqrt(hs);
  const dq = zerosLike(q, q.length);
  const dkAcc = new Float64Array(k.length); // summed over t and the group's heads in float64
  const dvAcc = new Float64Array(v.length);
  const dS = new Float64Array(S);
  const dqRow = new Float64Array(hs);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const kvHead = Math.floor(h / group) * hs;
      for (let t = 0; t < T; t++) {
        const last = past + t;
        const p = ((b * NH + h) * T + t) * S;
        const qo = (b * T + t) * qWidth + h * hs;
        let rowDot = 0;
        for (let u = 0; u <= last; u++) {
          const vo = (b * S + u) * kvWidth + kvHead;
          let dP = 0;
          for (let i = 0; i < hs; i++) dP += dout[qo + i]! * v[vo + i]!;
          dS[u] = dP;
          rowDot += probs[p + u]! * dP;
        }
        dqRow.fill(0);
        for (let u = 0; u <= last; u++) {
          const P = probs[p + u]!;
          const ds = P * (dS[u]! - rowDot) * scale;
          const ko = (b * S + u) * kvWidth + kvHead;
          for (let i = 0; i < hs; i++) {
            dqRow[i] = dqRow[i]! + ds * k[ko + i]!;
            dkAcc[ko + i] = dkAcc[ko + i]! + ds * q[qo + i]!;
            dvAcc[ko + i] = dvAcc[ko + i]! + P * dout[qo + i]!;
          }
        }
        for (let i = 0; i < hs; i++) dq[qo + i] = dqRow[i]!;
      }
    }
  }
  const dk = zerosLike(q, k.length);
  const dv = zerosLike(q, v.length);
  dk.set(dkAcc);
  dv.set(dvAcc);
  return { dq, dk, dv };
}
