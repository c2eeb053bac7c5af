/**
 * A Llama-family model (Llama as SmolLM2 uses it, Qwen2, Qwen3; src/models/hf/llama-cpu.ts is its
 * CPU twin) as an ONNX graph of standard ai.onnx opset-17 ops, for onnxruntime-web as the peer of
 * the real-shape benches. Inputs and outputs are named as Hugging Face's optimum exports name them
 * (the files transformers.js runs), so the peer is driven as it is in the wild:
 *
 *   input_ids       (B, T) int64      position_ids (B, T) int64 (row b, query t at position p)
 *   past_key_values.N.key / .value    (B, NKV, P, hs)         decode graph only (withPast)
 *   logits          (B, T, V)
 *   present.N.key / present.N.value   (B, NKV, P + T, hs)     P = 0 in the prefill graph
 *
 * Per block, on x (B, T, C):
 *   xn = x · rsqrt(mean(x²) + ε) · w                              RMSNorm: ReduceMean, Sqrt, Reciprocal
 *   q = xn·Wqᵀ (+bq) → (B, T, NH, hs); k, v → (B, T, NKV, hs)     MatMul with Wᵀ stored as an
 *                                                                  initializer (in, out), as optimum does
 *   q, k = per-head RMSNorm (Qwen3), then rotate-half rotary: x·cos + [−x₂, x₁]·sin
 *   k, v → (B, NKV, T, hs), appended to the past on axis 2 → present
 *   q → (B, NKV, G·T, hs) (row g·T + t is query head kv·G + g at t): each kv head serves its G
 *        query heads in one MatMul, so k and v are never repeated (G = NH / NKV)
 *   s = q·kᵀ/√hs (B, NKV, G·T, S); key u > position of the row → −big; softmax; a = s·v
 *   x += a·Woᵀ (+bo);  x += (silu(xn2·Wgᵀ) ⊙ xn2·Wuᵀ)·Wdᵀ
 * logits = rmsnorm(x)·W_headᵀ: a Gemm with transB on the (V, C) embedding when tied, so the
 * largest tensor is not stored twice; MatMul with a stored (C, V) lm_head otherwise.
 *
 * No fused or contrib ops (SimplifiedLayerNormalization, RotaryEmbedding, GroupQueryAttention,
 * MatMulNBits): those are com.microsoft ops outside the standard opset; ORT's graph optimizer
 * may fuse these patterns itself where its WebGPU EP has the fused kernel.
 *
 * dtype 'f16': weights, activations, k/v and logits all f16 (what the fp16 exports that
 * transformers.js runs on WebGPU do; needs the adapter's shader-f16); 'f32' throughout otherwise.
 */
import { checkLlamaSpec } from '../../src/models/hf/llama-cpu-weights';
import type { ModelSpec } from '../../src/models/model-spec';
import { attr, floatTensor, GraphBuilder } from '../../src/onnx/graph-builder';
import { DataType, type GraphProto, type ValueInfoProto } from '../../src/onnx/onnx-proto';

export type LlamaGraphDtype = 'f32' | 'f16';

export interface LlamaGraphOptions {
  dtype: LlamaGraphDtype;
  /** true: the decode graph (past k/v in); false: the prefill/scoring graph. */
  withPast: boolean;
}

export const LLAMA_IO = {
  inputIds: 'input_ids',
  positionIds: 'position_ids',
  logits: 'logits',
  pastKey: (n: number) => `past_key_values.${n}.key`,
  pastValue: (n: number) => `past_key_values.${n}.value`,
  presentKey: (n: number) => `present.${n}.key`,
  presentValue: (n: number) => `present.${n}.value`,
} as const;

/**
 * One initializer the graph reads: a Hugging Face tensor, as stored ('as-is': its own shape) or
 * transposed to (in, out) for MatMul ('transposed': dims are the transpose of the HF shape).
 */
export interface LlamaInitializer {
  name: string;
  hfName: string;
  dims: number[];
  layout: 'as-is' | 'transposed';
}

export interface LlamaGraph {
  /** The graph without initializers: they are written by llama-model-bytes.ts from `weights`. */
  graph: GraphProto;
  weights: LlamaInitializer[];
  elemType: number;
}

/** A value far below any score, representable in f16 (whose largest is 65504). */
const MASKED = -30_000;

export function llamaGraph(spec: ModelSpec, options: LlamaGraphOptions): LlamaGraph {
  checkLlamaSpec(spec);
  if (options.dtype !== 'f32' && options.dtype !== 'f16') {
    throw new Error(`llamaGraph: dtype must be 'f32' or 'f16', got ${String(options.dtype)}`);
  }
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, vocab: V } = spec;
  const G = NH / NKV;
  const elemType = options.dtype === 'f16' ? DataType.FLOAT16 : DataType.FLOAT;
  const g = new GraphBuilder();
  const weights: LlamaInitializer[] = [];

  /** A weight initializer (its name claimed in the graph) under its HF name, or `${HF}.T`. */
  const weight = (hfName: string, hfShape: number[], layout: LlamaInitializer['layout']) => {
    const name = layout === 'transposed' ? `${hfName}.T` : hfName;
    const dims = layout === 'transposed' ? [hfShape[1]!, hfShape[0]!] : hfShape;
    weights.push({ name: g.input(name), hfName, dims, layout });
    return name;
  };
  /** A float constant in the compute dtype (a Cast of an f32 Constant, folded by ORT). */
  const constant = (name: string, dims: number[], values: number[]): string => {
    if (options.dtype === 'f32') return g.constant(floatTensor(name, dims, values));
    const f32 = g.constant(floatTensor(`${name}.f32`, dims, values));
    return g.op('Cast', [f32], name, [attr.int('to', elemType)]);
  };
  const toCompute = (x: string, name: string): string =>
    options.dtype === 'f32' ? x : g.op('Cast', [x], name, [attr.int('to', elemType)]);
  const axisLast = [attr.ints('axes', [-1]), attr.int('keepdims', 1)];
  const eps = constant('eps', [], [spec.normEps]);

  /** x · rsqrt(mean(x²) over the last axis + ε) · w. */
  const rmsNorm = (x: string, w: string, out: string): string => {
    const sq = g.op('Mul', [x, x], `${out}.sq`);
    const ms = g.op('ReduceMean', [sq], `${out}.ms`, axisLast);
    const r = g.op(
      'Reciprocal',
      [g.op('Sqrt', [g.op('Add', [ms, eps], `${out}.mse`)], `${out}.rms`)],
      `${out}.r`,
    );
    return g.op('Mul', [g.op('Mul', [x, r], `${out}.xr`), w], out);
  };
  const linear = (
    x: string,
    hfName: string,
    out: number,
    inDim: number,
    bias: boolean,
    name: string,
  ) => {
    const w = weight(`${hfName}.weight`, [out, inDim], 'transposed');
    if (!bias) return g.op('MatMul', [x, w], name);
    const b = weight(`${hfName}.bias`, [out], 'as-is');
    return g.op('Add', [g.op('MatMul', [x, w], `${name}.mm`), b], name);
  };

  const ids = g.input(LLAMA_IO.inputIds);
  const positions = g.input(LLAMA_IO.positionIds);
  const embed = weight('model.embed_tokens.weight', [V, C], 'as-is');
  let x = g.op('Gather', [embed, ids], 'embed', [attr.int('axis', 0)]); // (B, T, C)

  // Rotary: angle (B, T, hs) = position · inv_freq, both halves; cos/sin as (B, T, 1, hs).
  const half = hs / 2;
  const invFreq = Array.from({ length: half }, (_, i) => spec.rotaryBase ** ((-2 * i) / hs));
  const posF = g.op('Cast', [positions], 'pos.f32', [attr.int('to', DataType.FLOAT)]); // (B, T)
  const posCol = g.op('Unsqueeze', [posF, g.ints('axis.last', [-1])], 'pos.col'); // (B, T, 1)
  const freqs = g.op(
    'Mul',
    [posCol, g.constant(floatTensor('inv_freq', [half], invFreq))],
    'freqs',
  );
  const angles = g.op('Concat', [freqs, freqs], 'angles', [attr.int('axis', -1)]);
  const axis2 = g.ints('axis.2', [2]);
  const cos = g.op(
    'Unsqueeze',
    [toCompute(g.op('Cos', [angles], 'cos.f32'), 'cos.c'), axis2],
    'cos',
  );
  const sin = g.op(
    'Unsqueeze',
    [toCompute(g.op('Sin', [angles], 'sin.f32'), 'sin.c'), axis2],
    'sin',
  );
  const lo = g.ints('half.lo', [0]);
  const mid = g.ints('half.mid', [half]);
  const hi = g.ints('half.hi', [hs]);
  /** x (B, T, H, hs) → x·cos + [−x₂, x₁]·sin. */
  const rotary = (v: string, out: string): string => {
    const x1 = g.op('Slice', [v, lo, mid, g.ints(`${out}.ax1`, [-1])], `${out}.x1`);
    const x2 = g.op('Slice', [v, mid, hi, g.ints(`${out}.ax2`, [-1])], `${out}.x2`);
    const rot = g.op('Concat', [g.op('Neg', [x2], `${out}.nx2`), x1], `${out}.rot`, [
      attr.int('axis', -1),
    ]);
    const a = g.op('Mul', [v, cos], `${out}.cos`);
    return g.op('Add', [a, g.op('Mul', [rot, sin], `${out}.sin`)], out);
  };

  const scale = constant('attn.scale', [], [1 / Math.sqrt(hs)]);
  const masked = constant('attn.masked', [], [MASKED]);
  const headsShape = (h: number, name: string) => g.ints(name, [0, 0, h, hs]);
  const qShape = headsShape(NH, 'shape.q');
  const kvShape = headsShape(NKV, 'shape.kv');
  const groupShape = g.ints('shape.group', [0, NKV, -1, hs]); // (B, NH, T, hs) → (B, NKV, G·T, hs)
  const ungroupShape = g.ints('shape.ungroup', [0, NH, -1, hs]);
  const flatShape = g.ints('shape.flat', [0, 0, NH * hs]);
  const toHeads = [attr.ints('perm', [0, 2, 1, 3])];

  const pastInputs: ValueInfoProto[] = [];
  const presentOutputs: ValueInfoProto[] = [];
  const kvInfo = (name: string, seq: string): ValueInfoProto => ({
    name,
    elemType,
    shape: ['batch', NKV, seq, hs],
  });
  let mask: string | undefined;
  for (let n = 0; n < spec.layers; n++) {
    const p = `model.layers.${n}.`;
    const l = `l${n}.`;
    const xn = rmsNorm(x, weight(`${p}input_layernorm.weight`, [C], 'as-is'), `${l}xn`);
    let q = g.op(
      'Reshape',
      [linear(xn, `${p}self_attn.q_proj`, NH * hs, C, spec.qkvBias, `${l}q`), qShape],
      `${l}q.h`,
    );
    let k = g.op(
      'Reshape',
      [linear(xn, `${p}self_attn.k_proj`, NKV * hs, C, spec.qkvBias, `${l}k`), kvShape],
      `${l}k.h`,
    );
    const v = g.op(
      'Reshape',
      [linear(xn, `${p}self_attn.v_proj`, NKV * hs, C, spec.qkvBias, `${l}v`), kvShape],
      `${l}v.h`,
    );
    if (spec.qkNorm) {
      q = rmsNorm(q, weight(`${p}self_attn.q_norm.weight`, [hs], 'as-is'), `${l}q.n`);
      k = rmsNorm(k, weight(`${p}self_attn.k_norm.weight`, [hs], 'as-is'), `${l}k.n`);
    }
    const qT = g.op('Transpose', [rotary(q, `${l}q.r`)], `${l}q.t`, toHeads); // (B, NH, T, hs)
    const kNew = g.op('Transpose', [rotary(k, `${l}k.r`)], `${l}k.t`, toHeads); // (B, NKV, T, hs)
    const vNew = g.op('Transpose', [v], `${l}v.t`, toHeads);
    let kAll: string;
    let vAll: string;
    if (options.withPast) {
      const pk = g.input(LLAMA_IO.pastKey(n));
      const pv = g.input(LLAMA_IO.pastValue(n));
      pastInputs.push(kvInfo(pk, 'past_sequence'), kvInfo(pv, 'past_sequence'));
      kAll = g.op('Concat', [pk, kNew], LLAMA_IO.presentKey(n), [attr.int('axis', 2)]);
      vAll = g.op('Concat', [pv, vNew], LLAMA_IO.presentValue(n), [attr.int('axis', 2)]);
    } else {
      kAll = g.op('Identity', [kNew], LLAMA_IO.presentKey(n));
      vAll = g.op('Identity', [vNew], LLAMA_IO.presentValue(n));
    }
    presentOutputs.push(kvInfo(kAll, 'total_sequence'), kvInfo(vAll, 'total_sequence'));
    mask ??= causalMask(g, kAll, posF, G);
    const qg = g.op('Reshape', [qT, groupShape], `${l}q.g`);
    const kt = g.op('Transpose', [kAll], `${l}k.tt`, [attr.ints('perm', [0, 1, 3, 2])]);
    const s = g.op('Mul', [g.op('MatMul', [qg, kt], `${l}s.raw`), scale], `${l}s`);
    const probs = g.op('Softmax', [g.op('Where', [mask, masked, s], `${l}s.m`)], `${l}p`, [
      attr.int('axis', -1),
    ]);
    const a = g.op('MatMul', [probs, vAll], `${l}a.g`); // (B, NKV, G·T, hs)
    const aT = g.op(
      'Transpose',
      [g.op('Reshape', [a, ungroupShape], `${l}a.h`)],
      `${l}a.t`,
      toHeads,
    );
    const attn = g.op('Reshape', [aT, flatShape], `${l}a`); // (B, T, NH·hs)
    x = g.op(
      'Add',
      [x, linear(attn, `${p}self_attn.o_proj`, C, NH * hs, spec.outBias, `${l}o`)],
      `${l}x.mid`,
    );
    const xn2 = rmsNorm(x, weight(`${p}post_attention_layernorm.weight`, [C], 'as-is'), `${l}xn2`);
    const gate = linear(xn2, `${p}mlp.gate_proj`, F, C, spec.mlpBias, `${l}gate`);
    const up = linear(xn2, `${p}mlp.up_proj`, F, C, spec.mlpBias, `${l}up`);
    const silu = g.op('Mul', [gate, g.op('Sigmoid', [gate], `${l}gate.sig`)], `${l}silu`);
    const h = g.op('Mul', [silu, up], `${l}h`);
    x = g.op(
      'Add',
      [x, linear(h, `${p}mlp.down_proj`, C, F, spec.mlpBias, `${l}down`)],
      `${l}x.out`,
    );
  }
  const xf = rmsNorm(x, weight('model.norm.weight', [C], 'as-is'), 'xf');
  if (spec.tiedEmbeddings) {
    // Gemm is 2-D: (B·T, C) · embedᵀ → (B·T, V), then back to (B, T, V).
    const rows = g.op('Reshape', [xf, g.ints('shape.rows', [-1, C])], 'xf.rows');
    const z = g.op('Gemm', [rows, embed], 'logits.rows', [attr.int('transB', 1)]);
    const bt = g.op('Shape', [ids], 'shape.bt');
    const outShape = g.op('Concat', [bt, g.ints('shape.v', [V])], 'shape.logits', [
      attr.int('axis', 0),
    ]);
    g.op('Reshape', [z, outShape], LLAMA_IO.logits);
  } else {
    g.op('MatMul', [xf, weight('lm_head.weight', [V, C], 'transposed')], LLAMA_IO.logits);
  }
  const idsInfo = (name: string): ValueInfoProto => ({
    name,
    elemType: DataType.INT64,
    shape: ['batch', 'sequence'],
  });
  return {
    graph: {
      name: `${spec.family}_${options.withPast ? 'decode' : 'prefill'}`,
      nodes: g.nodes,
      initializers: [],
      inputs: [idsInfo(ids), idsInfo(positions), ...pastInputs],
      outputs: [
        { name: LLAMA_IO.logits, elemType, shape: ['batch', 'sequence', V] },
        ...presentOutputs,
      ],
    },
    weights,
    elemType,
  };
}

/**
 * The attention mask (B, 1, G·T, S), true where key u lies after the row's position: built once
 * from the first layer's present keys (S = their length) and the positions (B, T) as f32, tiled
 * G times so that row g·T + t reads position t.
 */
function causalMask(g: GraphBuilder, keys: string, posF: string, G: number): string {
  const kShape = g.op('Shape', [keys], 'mask.kshape');
  const s = g.op('Gather', [kShape, g.ints('mask.axis', [2])], 'mask.s'); // (1) int64
  const sF = g.op('Cast', [s], 'mask.s.f32', [attr.int('to', DataType.FLOAT)]);
  const sScalar = g.op('Squeeze', [sF], 'mask.s.scalar');
  const keyPos = g.op(
    'Range',
    [g.scalar('mask.zero', 0), sScalar, g.scalar('mask.one', 1)],
    'mask.keys',
  ); // (S)
  const rows = g.op('Tile', [posF, g.ints('mask.tile', [1, G])], 'mask.rows'); // (B, G·T)
  const col = g.op('Unsqueeze', [rows, g.ints('mask.axes', [1, 3])], 'mask.col'); // (B, 1, G·T, 1)
  return g.op('Greater', [keyPos, col], 'mask');
}
