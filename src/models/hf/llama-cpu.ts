/**
 * The CPU forward of the Llama family (Llama as SmolLM2 uses it, Qwen2, Qwen3), composed of the
 * ops in src/ops/nn and nothing else (no private copy of their math), so that each later GPU
 * kernel has its twin there and a LoRA backward can run the ops' backwards over the activations
 * kept here. Per block, on the residual stream x (N, C), N = B·T rows:
 *
 *   xn = rmsnorm(x)·w_in                                    input_layernorm
 *   q = xn·Wqᵀ (+bq) (N, NH·hs);  k, v = xn·Wk/vᵀ (+b) (N, NKV·hs)
 *   q, k = rmsnorm per head (Qwen3 q_norm / k_norm)            before rotary
 *   q, k = rotary(q, k) at each row's position                 rotate-half, rope_theta
 *   a = GQA causal attention(q, k, v) (N, NH·hs);  x += a·Woᵀ (+bo)
 *   xn2 = rmsnorm(x)·w_post;  h = silu(xn2·Wgᵀ) ⊙ (xn2·Wuᵀ) (N, F);  x += h·Wdᵀ
 * then logits = rmsnorm(x)·w_norm·W_headᵀ (N, V), W_head = embed_tokens when tied.
 *
 * Shapes: B = batch, T = seq, C = width, NH = heads, NKV = kvHeads, hs = headDim, F = mlpWidth,
 * V = vocab. Every op sums in float64 and rounds its output to the weights' precision.
 *
 * With LoRA adapters (llama-lora.ts) each targeted projection adds (alpha/r)·(x·Aᵀ)·Bᵀ to its
 * output (src/ops/nn/lora.ts) and the activations keep u = (alpha/r)·x·Aᵀ for the backward; the
 * projections' inputs are kept anyway. Without adapters the pass is the base model's.
 */
import { add } from '../../ops/nn/add';
import { gqaAttentionForward } from '../../ops/nn/attention-gqa';
import { embeddingForward } from '../../ops/nn/embedding';
import { type Floats, type Ints } from '../../ops/nn/floats';
import { linearForward, type LinearShape } from '../../ops/nn/linear';
import { loraForward } from '../../ops/nn/lora';
import { rmsNormForward } from '../../ops/nn/rms-norm';
import { rotaryTable, type RotaryTable } from '../../ops/nn/rotary';
import { rotaryHeadsForward } from '../../ops/nn/rotary-heads';
import { swigluForward } from '../../ops/nn/swiglu';
import { tokenLogprobs } from '../../ops/token-logprobs';
import { OpInputError } from '../../ops/errors';
import { checkInt } from '../../ops/validate';
import type { LlamaCpuModel, LlamaLayerWeights } from './llama-cpu-weights';
import { type LlamaLora, type LoraLayer, type LoraModule, loraModuleDims } from './llama-lora';

const OP = 'llamaForward';

/** What one block computed: the inputs of every op's backward (a LoRA backward reads these). */
export interface LlamaLayerActivations<T extends Floats = Float32Array> {
  /** The block's input, the residual stream: (N, C). */
  x: T;
  /** input_layernorm: rstd (N) and output xn (N, C), the q/k/v projections' input. */
  inputRstd: T;
  xn: T;
  /** q_proj, k_proj, v_proj outputs (bias added): (N, NH·hs), (N, NKV·hs), (N, NKV·hs). */
  q: T;
  k: T;
  v: T;
  /** Qwen3: the per-head norms' rstd, (N·NH) and (N·NKV); undefined without qkNorm. */
  qNormRstd: T | undefined;
  kNormRstd: T | undefined;
  /** The rotary ops' inputs: q and k after the per-head norm (q and k themselves without it). */
  qPreRotary: T;
  kPreRotary: T;
  /** The attention's q and k inputs (rotated): (N, NH·hs), (N, NKV·hs). */
  qRot: T;
  kRot: T;
  /** Attention probabilities: (B, NH, T, T) in the full pass; per step in generation. */
  probs: T;
  /** The attention's output, o_proj's input: (N, NH·hs). */
  attn: T;
  /** The residual stream after attention, post_attention_layernorm's input: (N, C). */
  xMid: T;
  /** post_attention_layernorm: rstd (N) and output (N, C), gate/up's input. */
  postRstd: T;
  xn2: T;
  /** gate_proj and up_proj outputs and silu(gate) ⊙ up, down_proj's input: (N, F). */
  gate: T;
  up: T;
  h: T;
  /** Per adapted projection, u = (alpha/r)·x·Aᵀ (N, r); empty without adapters. */
  loraU: Partial<Record<LoraModule, T>>;
}

export interface LlamaActivations<T extends Floats = Float32Array> {
  batch: number;
  seq: number;
  /** Token ids (B·T) and each row's position (B·T). */
  ids: Int32Array;
  positions: Int32Array;
  layers: LlamaLayerActivations<T>[];
  /** The last block's output (N, C), the final norm's rstd (N) and output (N, C), lm_head's input. */
  xFinal: T;
  finalRstd: T;
  xnFinal: T;
  /** The adapters the pass applied (the backward follows the same ones); undefined: base model. */
  lora: LlamaLora<T> | undefined;
}

export interface LlamaForward<T extends Floats = Float32Array> {
  /** (B, T, V). */
  logits: T;
  activations: LlamaActivations<T>;
}

/** The attention step of a block: q (N, NH·hs), k, v (N, NKV·hs) rotated → out (N, NH·hs). */
export type Attend<T extends Floats> = (q: T, k: T, v: T) => { out: T; probs: T };

/** The rotary table of positions 0 … positions − 1 for the model's heads and rope_theta. */
export function llamaRotaryTable(model: LlamaCpuModel<Floats>, positions: number): RotaryTable {
  return rotaryTable(positions, model.spec.headDim, model.spec.rotaryBase);
}

/** One block's adapters and their scale alpha / r, as llamaBlockForward takes them. */
export interface BlockAdapters<T extends Floats> {
  layer: LoraLayer<T>;
  rank: number;
  scale: number;
}

/**
 * One block on x (N, C) with row r at positions[r]; `attend` mixes the rows (the full causal pass,
 * or one that reads and fills a KV cache); `adapters` adds LoRA to the targeted projections.
 * Returns the block's output and its activations.
 */
export function llamaBlockForward<T extends Floats>(
  model: LlamaCpuModel<T>,
  layer: LlamaLayerWeights<T>,
  x: T,
  positions: Int32Array,
  table: RotaryTable,
  attend: Attend<T>,
  adapters?: BlockAdapters<T>,
): { out: T; activations: LlamaLayerActivations<T> } {
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, normEps } = model.spec;
  const rows = positions.length;
  const loraU: Partial<Record<LoraModule, T>> = {};
  // A projection of the base model, plus its adapter's update where it has one.
  const project = (module: LoraModule, input: T, w: T, b: T | undefined, shape: LinearShape) => {
    const y = linearForward(input, w, b, shape);
    const adapter = adapters?.layer[module];
    if (!adapter) return y;
    const { rank } = adapters;
    const { out, u } = loraForward(
      input,
      adapter.a,
      adapter.b,
      y,
      { ...shape, rank },
      adapters.scale,
    );
    loraU[module] = u;
    return out;
  };
  const norm1 = rmsNormForward(x, layer.inputNorm, rows, C, normEps);
  const xn = norm1.out;
  const q = project('q_proj', xn, layer.q, layer.qBias, { rows, inDim: C, outDim: NH * hs });
  const k = project('k_proj', xn, layer.k, layer.kBias, { rows, inDim: C, outDim: NKV * hs });
  const v = project('v_proj', xn, layer.v, layer.vBias, { rows, inDim: C, outDim: NKV * hs });
  let qPreRotary = q;
  let kPreRotary = k;
  let qNormRstd: T | undefined;
  let kNormRstd: T | undefined;
  if (layer.qNorm && layer.kNorm) {
    // (N, H·hs) is (N·H, hs): one RMSNorm row per head.
    const qn = rmsNormForward(q, layer.qNorm, rows * NH, hs, normEps);
    const kn = rmsNormForward(k, layer.kNorm, rows * NKV, hs, normEps);
    qPreRotary = qn.out;
    kPreRotary = kn.out;
    qNormRstd = qn.rstd;
    kNormRstd = kn.rstd;
  }
  const qRot = rotaryHeadsForward(qPreRotary, positions, table, { rows, heads: NH, headSize: hs });
  const kRot = rotaryHeadsForward(kPreRotary, positions, table, {
    rows,
    heads: NKV,
    headSize: hs,
  });
  const { out: attn, probs } = attend(qRot, kRot, v);
  const attnOut = project('o_proj', attn, layer.o, layer.oBias, {
    rows,
    inDim: NH * hs,
    outDim: C,
  });
  const xMid = add(x, attnOut);
  const norm2 = rmsNormForward(xMid, layer.postNorm, rows, C, normEps);
  const xn2 = norm2.out;
  const gate = project('gate_proj', xn2, layer.gate, layer.gateBias, { rows, inDim: C, outDim: F });
  const up = project('up_proj', xn2, layer.up, layer.upBias, { rows, inDim: C, outDim: F });
  const h = swigluForward(gate, up);
  const mlpOut = project('down_proj', h, layer.down, layer.downBias, { rows, inDim: F, outDim: C });
  const out = add(xMid, mlpOut);
  return {
    out,
    activations: {
      x,
      inputRstd: norm1.rstd,
      xn,
      q,
      k,
      v,
      qNormRstd,
      kNormRstd,
      qPreRotary,
      kPreRotary,
      qRot,
      kRot,
      probs,
      attn,
      xMid,
      postRstd: norm2.rstd,
      xn2,
      gate,
      up,
      h,
      loraU,
    },
  };
}

/** Checks that `lora` was made for this model's shapes; one block's adapters for llamaBlockForward. */
export function blockAdapters<T extends Floats>(
  model: LlamaCpuModel<T>,
  lora: LlamaLora<T> | undefined,
  layer: number,
): BlockAdapters<T> | undefined {
  if (!lora) return undefined;
  if (lora.layers.length !== model.spec.layers) {
    throw new OpInputError(
      OP,
      'lora',
      `has adapters for ${lora.layers.length} layers, the model has ${model.spec.layers}`,
    );
  }
  const adapters = lora.layers[layer]!;
  for (const [module, adapter] of Object.entries(adapters) as [
    LoraModule,
    LoraLayer<T>[LoraModule],
  ][]) {
    const want = loraModuleDims(model.spec, module);
    if (adapter && (adapter.inDim !== want.inDim || adapter.outDim !== want.outDim)) {
      throw new OpInputError(
        OP,
        'lora',
        `adapts layer ${layer}'s ${module} as ${adapter.inDim} → ${adapter.outDim}, the model's is ${want.inDim} → ${want.outDim}`,
      );
    }
  }
  return { layer: adapters, rank: lora.settings.rank, scale: lora.scale };
}

/** The embedding rows of `ids` (N) as the residual stream (N, C); ids checked against V. */
export function llamaEmbed<T extends Floats>(model: LlamaCpuModel<T>, ids: Ints): T {
  const { vocab, width } = model.spec;
  return embeddingForward(ids, model.embed, undefined, {
    batch: 1,
    seq: ids.length,
    channels: width,
    vocab,
    maxSeq: ids.length,
  });
}

/** Final norm and LM head on x (rows, C): logits (rows, V), with the norm's rstd and output. */
export function llamaHead<T extends Floats>(
  model: LlamaCpuModel<T>,
  x: T,
  rows: number,
): { logits: T; rstd: T; xn: T } {
  const { width: C, vocab: V, normEps } = model.spec;
  const { out: xn, rstd } = rmsNormForward(x, model.norm, rows, C, normEps);
  const logits = linearForward(xn, model.lmHead, undefined, { rows, inDim: C, outDim: V });
  return { logits, rstd, xn };
}

/** Checks batch, seq and ids (B·T) for a teacher-forced pass. */
function checkIds(model: LlamaCpuModel<Floats>, ids: Ints, batch: number, seq: number): void {
  checkInt(OP, 'batch', batch, 1, 2 ** 16);
  checkInt(OP, 'seq', seq, 1, model.spec.context);
  if (ids.length !== batch * seq) {
    throw new OpInputError(
      OP,
      'ids',
      `must have batch × seq = ${batch} × ${seq} = ${batch * seq} elements, got ${ids.length}`,
    );
  }
}

/** Options of a teacher-forced pass. */
export interface LlamaForwardOptions<T extends Floats> {
  /** LoRA adapters to apply; undefined (the default) is the base model. */
  lora?: LlamaLora<T> | undefined;
}

/**
 * The teacher-forced pass over B sequences of T tokens each (ids (B·T), row b·T + t at position
 * t): logits (B, T, V) and every activation a backward needs.
 */
export function llamaForward<T extends Floats>(
  model: LlamaCpuModel<T>,
  ids: Ints,
  batch: number,
  seq: number,
  options: LlamaForwardOptions<T> = {},
): LlamaForward<T> {
  checkIds(model, ids, batch, seq);
  const { heads, kvHeads, headDim } = model.spec;
  const rows = batch * seq;
  const positions = Int32Array.from({ length: rows }, (_, r) => r % seq);
  const table = llamaRotaryTable(model, seq);
  const attend: Attend<T> = (q, k, v) =>
    gqaAttentionForward(q, k, v, { batch, seq, heads, kvHeads, headSize: headDim });
  let x = llamaEmbed(model, ids);
  const layers: LlamaLayerActivations<T>[] = [];
  for (const [l, layer] of model.layers.entries()) {
    const adapters = blockAdapters(model, options.lora, l);
    const block = llamaBlockForward(model, layer, x, positions, table, attend, adapters);
    layers.push(block.activations);
    x = block.out;
  }
  const head = llamaHead(model, x, rows);
  return {
    logits: head.logits,
    activations: {
      batch,
      seq,
      ids: Int32Array.from(ids),
      positions,
      layers,
      xFinal: x,
      finalRstd: head.rstd,
      xnFinal: head.xn,
      lora: options.lora,
    },
  };
}

/**
 * Teacher-forced scoring: logprobs (B, T − 1), entry (b, t) = log p(ids[b, t + 1] | ids[b, ≤ t])
 * under softmax(logits / temperature) (src/ops/token-logprobs.ts), and the forward it came from.
 */
export function llamaScore(
  model: LlamaCpuModel<Float32Array>,
  ids: Ints,
  batch: number,
  seq: number,
  options: { temperature?: number; lora?: LlamaLora<Float32Array> | undefined } = {},
): { logprobs: Float32Array; forward: LlamaForward<Float32Array> } {
  checkIds(model, ids, batch, seq);
  if (seq < 2)
    throw new OpInputError('llamaScore', 'seq', `must be at least 2 to score, got ${seq}`);
  const forward = llamaForward(model, ids, batch, seq, { lora: options.lora });
  const V = model.spec.vocab;
  const scored = batch * (seq - 1);
  // The rows that predict a next token (t < T − 1) and that token.
  const logits = new Float32Array(scored * V);
  const targets = new Int32Array(scored);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < seq - 1; t++) {
      const n = b * (seq - 1) + t;
      const row = b * seq + t;
      logits.set(forward.logits.subarray(row * V, (row + 1) * V), n * V);
      targets[n] = ids[row + 1]!;
    }
  }
  const { logp } = tokenLogprobs(logits, targets, scored, V, {
    withEntropy: false,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
  });
  return { logprobs: logp, forward };
}
