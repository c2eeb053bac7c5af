/**
 * The transformer policy → an ONNX model (opset 17) that computes what transformer-cpu.ts
 * computes: pre-LayerNorm GPT-2 with learned or rotary positions, causal multi-head attention, GELU
 * (tanh approximation), tied or separate LM head, optional value head.
 *
 *   input   input_ids  int64 [batch, seq]        seq ≤ context (symbolic dims 'batch', 'seq')
 *   output  logits     float [batch, seq, vocab]
 *   output  values     float [batch, seq]        only with a value head
 *
 * Weights are initializers named exactly as in transformerLayout() with the layout's shapes (W as
 * (out, in)); config and tokenizer ride in metadata_props (format.ts). How each piece maps:
 *
 *   positions   Shape(input_ids)[1:2] = T; Slice(wpe, [0], [T], axes [0]) → (T, C), added to
 *               Gather(wte, input_ids) → (B, T, C) by broadcasting.
 *   rotary      (positions 'rotary': no wpe) Constants cos, sin (context, hs) — each half of a
 *               head repeats the table's (context, hs/2) row — sliced to (T, 1, hs); on q and k as
 *               (B, T, NH, hs): x·cos + rotate_half(x)·sin, rotate_half(x) = Concat(−x₂, x₁) of the
 *               two halves (Hugging Face's convention, src/ops/nn/rotary.ts).
 *   causal mask a bool Constant (context, context), true strictly above the diagonal (a future
 *               position), sliced to (T, T). Scores there are replaced by −1e9 with Where, not
 *               by −inf: exp(−1e9 − max) is exactly 0 in float32 for any row max below 1e8 in
 *               size, so masked positions get probability exactly 0, as in our CPU op, which
 *               skips them; and no −inf reaches a GPU softmax (WGSL leaves inf arithmetic to
 *               the implementation). The diagonal is never masked, so every row keeps a finite max.
 *   LayerNorm   LayerNormalization (opset 17), axis −1, epsilon = LAYER_NORM_DEFAULT_EPS (1e-5,
 *               what transformer-cpu.ts uses; TransformerConfig has no epsilon field).
 *   Linear      Transpose(W) → MatMul → Add(b), see GraphBuilder.linear.
 *   attention   Split(qkv) into q, k, v (B, T, C); Reshape [0, 0, NH, hs]; q, v Transpose
 *               [0, 2, 1, 3] → (B, NH, T, hs), k Transpose [0, 2, 3, 1] → (B, NH, hs, T);
 *               MatMul · (1/√hs), mask, Softmax(axis −1), MatMul v, back to (B, T, C).
 *   GELU        0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) from Mul/Add/Tanh (the Gelu op with
 *               approximate='tanh' needs opset 20); x³ as (x·x)·x with Mul (exact where Pow may
 *               go through exp/log).
 */
import { LAYER_NORM_DEFAULT_EPS } from '../ops/nn/layer-norm';
import { TRANSFORMER_KIND } from '../models/lm-checkpoint';
import { CharTokenizer, type TokenizerSpec } from '../models/tokenizer';
import { rotaryTableFor } from '../models/rotary-table';
import {
  checkTransformerConfig,
  usesRotary,
  type TransformerConfig,
} from '../models/transformer-config';
import { blockParamNames, lmHeadName, transformerLayout } from '../models/transformer-params';
import { addWeights, checkParams } from './export-common';
import { CONFIG_KEY, TOKENIZER_KEY, buildModel, type ExportExtra } from './format';
import { GraphBuilder, attr, boolTensor, floatTensor } from './graph-builder';
import { OnnxError } from './onnx-error';
import { DataType } from './onnx-proto';
import { GELU_CUBIC, GELU_SCALE } from '../ops/nn/activation';

/** What masked attention scores are replaced with (see the file comment). */
export const MASK_VALUE = -1e9;

export const TRANSFORMER_INPUT = 'input_ids';
export const LOGITS_OUTPUT = 'logits';
export const VALUES_OUTPUT = 'values';

/**
 * Builds the ONNX bytes of a transformer with parameters `params` (transformerLayout(config),
 * layout.total floats, all finite) and its tokenizer. Throws OnnxError ('input') for a bad config,
 * parameter count, non-finite weight or a tokenizer with more ids than the vocabulary.
 */
export function exportTransformerOnnx(
  config: TransformerConfig,
  params: Float32Array,
  tokenizer: TokenizerSpec,
  extra: ExportExtra = {},
): Uint8Array {
  try {
    checkTransformerConfig(config);
  } catch (error) {
    throw new OnnxError('input', 'config', `is not a valid transformer config: ${String(error)}`);
  }
  let vocabSize: number;
  try {
    vocabSize = CharTokenizer.fromSpec(tokenizer).vocabSize;
  } catch (error) {
    throw new OnnxError('input', 'tokenizer', `is not a valid tokenizer spec: ${String(error)}`);
  }
  if (vocabSize > config.vocab) {
    throw new OnnxError(
      'input',
      'tokenizer',
      `has ${vocabSize} ids but the model's vocabulary is ${config.vocab}: ids would index past wte`,
    );
  }
  const layout = transformerLayout(config);
  checkParams(layout, params);

  const g = new GraphBuilder();
  addWeights(g, layout, params);
  const { width: C, heads: NH, context } = config;
  const hs = C / NH;

  // Embeddings: tok (B, T, C) + pos (T, C).
  const ids = g.input(TRANSFORMER_INPUT);
  const tok = g.op('Gather', ['wte', ids], 'tok_emb', [attr.int('axis', 0)]);
  const idsShape = g.op('Shape', [ids], 'ids_shape');
  const seqLen = g.op('Gather', [idsShape, g.ints('dim1', [1])], 'seq_len'); // (1) = [T]
  const zero = g.ints('zero', [0]);
  const rotary = usesRotary(config) ? rotaryNodes(g, config, seqLen, zero) : undefined;
  let x = rotary
    ? tok
    : g.op('Add', [tok, g.op('Slice', ['wpe', zero, seqLen, zero], 'pos_emb')], 'emb'); // starts, ends, axes

  // The causal mask (T, T): true where key position u > query position t.
  const future = new Uint8Array(context * context);
  for (let t = 0; t < context; t++)
    for (let u = t + 1; u < context; u++) future[t * context + u] = 1;
  const fullMask = g.constant(boolTensor('causal_mask_full', [context, context], future));
  const maskEnds = g.op('Concat', [seqLen, seqLen], 'mask_ends', [attr.int('axis', 0)]);
  const mask = g.op(
    'Slice',
    [fullMask, g.ints('zeros2', [0, 0]), maskEnds, g.ints('axes01', [0, 1])],
    'causal_mask',
  );
  const maskValue = g.scalar('mask_value', MASK_VALUE);
  const scale = g.scalar('attn_scale', 1 / Math.sqrt(hs));
  const headShape = g.ints('head_shape', [0, 0, NH, hs]); // 0 = keep that dim (B, T)
  const mergedShape = g.ints('merged_shape', [0, 0, C]);
  const gelu = geluConstants(g);
  const layerNorm = (input: string, gamma: string, beta: string, output: string) =>
    g.op('LayerNormalization', [input, gamma, beta], output, [
      attr.int('axis', -1),
      attr.float('epsilon', LAYER_NORM_DEFAULT_EPS),
    ]);

  for (let l = 0; l < config.layers; l++) {
    const n = blockParamNames(l);
    const p = `h${l}.`;
    const ln1 = layerNorm(x, n.ln1Gamma, n.ln1Beta, `${p}ln1.out`);
    const qkv = g.linear(ln1, n.qkvW, n.qkvB, `${p}qkv`);
    const [q, k, v] = g.node('Split', [qkv], [`${p}q`, `${p}k`, `${p}v`], [attr.int('axis', 2)]);
    const heads = (name: string, perm: number[], rotate = false) => {
      const split = g.op('Reshape', [name, headShape], `${name}.heads`); // (B, T, NH, hs)
      const placed = rotate && rotary ? rotary(split, name) : split;
      return g.op('Transpose', [placed], `${name}.t`, [attr.ints('perm', perm)]);
    };
    const qh = heads(q!, [0, 2, 1, 3], true); // (B, NH, T, hs)
    const kT = heads(k!, [0, 2, 3, 1], true); // (B, NH, hs, T)
    const vh = heads(v!, [0, 2, 1, 3]); // (B, NH, T, hs)
    const scores = g.op('Mul', [g.op('MatMul', [qh, kT], `${p}qk`), scale], `${p}scores`);
    const masked = g.op('Where', [mask, maskValue, scores], `${p}scores_masked`);
    const probs = g.op('Softmax', [masked], `${p}probs`, [attr.int('axis', -1)]);
    const attn = g.op('MatMul', [probs, vh], `${p}attn_heads`); // (B, NH, T, hs)
    const attnT = g.op('Transpose', [attn], `${p}attn_t`, [attr.ints('perm', [0, 2, 1, 3])]);
    const merged = g.op('Reshape', [attnT, mergedShape], `${p}attn`); // (B, T, C)
    const res1 = g.op('Add', [x, g.linear(merged, n.projW, n.projB, `${p}attn_proj`)], `${p}res1`);
    const ln2 = layerNorm(res1, n.ln2Gamma, n.ln2Beta, `${p}ln2.out`);
    const fc = g.linear(ln2, n.fcW, n.fcB, `${p}fc`);
    const act = geluNodes(g, gelu, fc, `${p}gelu`);
    x = g.op('Add', [res1, g.linear(act, n.mlpProjW, n.mlpProjB, `${p}mlp_proj`)], `${p}out`);
  }
  const lnf = layerNorm(x, 'lnf.gamma', 'lnf.beta', 'lnf.out');
  g.linear(lnf, lmHeadName(config), undefined, LOGITS_OUTPUT);
  if (config.valueHead) {
    const v = g.linear(lnf, 'value_head.w', 'value_head.b', 'value_col'); // (B, T, 1)
    g.op('Squeeze', [v, g.ints('last_axis', [2])], VALUES_OUTPUT);
  }

  const graph = {
    name: 'transformer_policy',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [{ name: TRANSFORMER_INPUT, elemType: DataType.INT64, shape: ['batch', 'seq'] }],
    outputs: [
      { name: LOGITS_OUTPUT, elemType: DataType.FLOAT, shape: ['batch', 'seq', config.vocab] },
      ...(config.valueHead
        ? [{ name: VALUES_OUTPUT, elemType: DataType.FLOAT, shape: ['batch', 'seq'] }]
        : []),
    ],
  };
  return buildModel(
    graph,
    TRANSFORMER_KIND,
    { [CONFIG_KEY]: JSON.stringify(config), [TOKENIZER_KEY]: JSON.stringify(tokenizer) },
    extra,
  );
}

/**
 * The rotary tables as Constants sliced to the input's T, and a function that rotates one
 * (B, T, NH, hs) tensor of heads: x·cos + rotate_half(x)·sin.
 */
function rotaryNodes(
  g: GraphBuilder,
  config: TransformerConfig,
  seqLen: string,
  zero: string,
): (heads: string, name: string) => string {
  const table = rotaryTableFor(config);
  const { positions, half } = table;
  const hs = 2 * half;
  // (context, 1, hs): each position's angles for both halves of a head, broadcast over NH.
  const full = (source: Float64Array) => {
    const out = new Float32Array(positions * hs);
    for (let p = 0; p < positions; p++) {
      for (let i = 0; i < half; i++) {
        out[p * hs + i] = source[p * half + i]!;
        out[p * hs + half + i] = source[p * half + i]!;
      }
    }
    return out;
  };
  const cosAll = g.constant(floatTensor('rotary.cos_full', [positions, 1, hs], full(table.cos)));
  const sinAll = g.constant(floatTensor('rotary.sin_full', [positions, 1, hs], full(table.sin)));
  const cos = g.op('Slice', [cosAll, zero, seqLen, zero], 'rotary.cos');
  const sin = g.op('Slice', [sinAll, zero, seqLen, zero], 'rotary.sin');
  const halves = g.ints('rotary.halves', [half, half]);
  return (heads, name) => {
    const [x1, x2] = g.node(
      'Split',
      [heads, halves],
      [`${name}.rot_x1`, `${name}.rot_x2`],
      [attr.int('axis', 3)],
    );
    const negX2 = g.op('Neg', [x2!], `${name}.rot_neg_x2`);
    const rotated = g.op('Concat', [negX2, x1!], `${name}.rot_half`, [attr.int('axis', 3)]);
    const cosPart = g.op('Mul', [heads, cos], `${name}.rot_cos`);
    const sinPart = g.op('Mul', [rotated, sin], `${name}.rot_sin`);
    return g.op('Add', [cosPart, sinPart], `${name}.rot`);
  };
}

interface GeluConstants {
  half: string;
  one: string;
  cubic: string;
  scale: string;
}

/** The GELU coefficients as scalar Constants, shared by every layer (and the MLP exporter). */
export function geluConstants(g: GraphBuilder): GeluConstants {
  return {
    half: g.scalar('gelu.half', 0.5),
    one: g.scalar('gelu.one', 1),
    cubic: g.scalar('gelu.cubic', GELU_CUBIC),
    scale: g.scalar('gelu.scale', GELU_SCALE),
  };
}

/** gelu(x) = (0.5·x)·(1 + tanh(√(2/π)·(x + 0.044715·(x·x)·x))), all names prefixed `out`. */
export function geluNodes(g: GraphBuilder, c: GeluConstants, x: string, out: string): string {
  const x3 = g.op('Mul', [g.op('Mul', [x, x], `${out}.x2`), x], `${out}.x3`);
  const inner = g.op('Add', [x, g.op('Mul', [x3, c.cubic], `${out}.cx3`)], `${out}.inner`);
  const t = g.op('Tanh', [g.op('Mul', [inner, c.scale], `${out}.u`)], `${out}.tanh`);
  const halfX = g.op('Mul', [x, c.half], `${out}.half_x`);
  return g.op('Mul', [halfX, g.op('Add', [t, c.one], `${out}.one_plus`)], out);
}
