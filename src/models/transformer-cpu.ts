/**
 * The transformer on the CPU: forward and backward composed from the layer ops in src/ops/nn, the
 * same ops the WGSL kernels are checked against. It is the CPU fallback and the twin that the GPU
 * model (transformer-gpu.ts) is tested against; in float64 it is what the whole-model gradient
 * check runs on.
 *
 * Shapes: B = batch, T = seq (≤ context), C = width, NH = heads, V = vocab; rows = B·T.
 */
import { activationBackward, activationForward } from '../ops/nn/activation';
import { add, addInto } from '../ops/nn/add';
import { attentionBackward, attentionForward } from '../ops/nn/attention';
import { embeddingBackward, embeddingForward } from '../ops/nn/embedding';
import type { Floats, Ints } from '../ops/nn/floats';
import { zerosLike } from '../ops/nn/floats';
import { layerNormBackward, layerNormForward } from '../ops/nn/layer-norm';
import { linearBackward, linearForward, type LinearShape } from '../ops/nn/linear';
import { rotaryBackward, rotaryForward } from '../ops/nn/rotary';
import { checkInt, checkLength } from '../ops/validate';
import type { ParamLayout } from './param-layout';
import { rotaryTableFor } from './rotary-table';
import { usesRotary, type TransformerConfig } from './transformer-config';
import { blockParamNames, lmHeadName } from './transformer-params';

interface LayerNormActs<T extends Floats> {
  out: T;
  mean: T;
  rstd: T;
}

/** What one block keeps for its backward pass. */
interface BlockActs<T extends Floats> {
  input: T; // (rows, C) the residual stream entering the block
  ln1: LayerNormActs<T>;
  qkv: T; // (rows, 3C), q and k rotated when the model uses rotary positions
  attn: T; // (rows, C) attention output before the projection
  probs: T; // (B, NH, T, T)
  res1: T; // (rows, C) input + attention branch
  ln2: LayerNormActs<T>;
  fc: T; // (rows, 4C) before GELU
  gelu: T; // (rows, 4C)
}

export interface TransformerActivations<T extends Floats> {
  tokens: Ints;
  batch: number;
  seq: number;
  blocks: BlockActs<T>[];
  final: T; // (rows, C) residual stream entering the final LayerNorm
  lnf: LayerNormActs<T>;
}

export interface TransformerOutput<T extends Floats> {
  logits: T; // (B, T, V)
  values: T | undefined; // (B, T) when the config has a value head
  acts: TransformerActivations<T>;
}

const OP = 'transformer';

export function checkTransformerBatch(
  config: TransformerConfig,
  tokens: Ints,
  batch: number,
  seq: number,
): void {
  checkInt(OP, 'batch', batch, 1, 2 ** 20);
  checkInt(OP, 'seq', seq, 1, config.context);
  checkLength(OP, 'tokens', tokens, batch * seq, 'batch × seq');
}

/**
 * How a block attends: full causal attention over the batch's T positions (training, scoring), or
 * one new position against a KV cache (generation). qkv: (rows, 3C) → out (rows, C).
 */
export type Attend<T extends Floats> = (qkv: T, layer: number) => { out: T; probs: T };

/** tokens (B·T) → logits (B, T, V) [and values (B, T)], keeping what backward needs. */
export function transformerForward<T extends Floats>(
  config: TransformerConfig,
  layout: ParamLayout,
  params: T,
  tokens: Ints,
  batch: number,
  seq: number,
): TransformerOutput<T> {
  checkTransformerBatch(config, tokens, batch, seq);
  const shape = { batch, seq, heads: config.heads, channels: config.width };
  return runTransformer(config, layout, params, tokens, batch, seq, 0, (qkv) =>
    attentionForward(qkv, shape),
  );
}

/**
 * The forward composition shared by training (transformerForward) and generation (decode steps in
 * transformer-decode-cpu.ts): tokens at positions posOffset … posOffset + seq − 1.
 */
export function runTransformer<T extends Floats>(
  config: TransformerConfig,
  layout: ParamLayout,
  params: T,
  tokens: Ints,
  batch: number,
  seq: number,
  posOffset: number,
  attend: Attend<T>,
): TransformerOutput<T> {
  const { width: C, vocab: V, context } = config;
  const rows = batch * seq;
  const p = (name: string) => layout.view(params, name);
  const linear = (inDim: number, outDim: number): LinearShape => ({ rows, inDim, outDim });
  const rotary = usesRotary(config) ? rotaryTableFor(config) : undefined;
  const rotaryShape = { batch, seq, heads: config.heads, channels: C };

  let x = embeddingForward(
    tokens,
    p('wte'),
    rotary ? undefined : p('wpe'),
    { batch, seq, channels: C, vocab: V, maxSeq: context },
    posOffset,
  );
  const blocks: BlockActs<T>[] = [];
  for (let l = 0; l < config.layers; l++) {
    const n = blockParamNames(l);
    const ln1 = layerNormForward(x, p(n.ln1Gamma), p(n.ln1Beta), rows, C);
    const projected = linearForward(ln1.out, p(n.qkvW), p(n.qkvB), linear(C, 3 * C));
    // Rotary: q and k turned by their positions' angles before attention (and before the KV cache
    // keeps k, so a cached key needs no further rotation).
    const qkv = rotary ? rotaryForward(projected, rotary, rotaryShape, posOffset) : projected;
    const { out: attn, probs } = attend(qkv, l);
    const res1 = add(x, linearForward(attn, p(n.projW), p(n.projB), linear(C, C)));
    const ln2 = layerNormForward(res1, p(n.ln2Gamma), p(n.ln2Beta), rows, C);
    const fc = linearForward(ln2.out, p(n.fcW), p(n.fcB), linear(C, 4 * C));
    const gelu = activationForward(fc, 'gelu');
    const next = add(res1, linearForward(gelu, p(n.mlpProjW), p(n.mlpProjB), linear(4 * C, C)));
    blocks.push({ input: x, ln1, qkv, attn, probs, res1, ln2, fc, gelu });
    x = next;
  }
  const lnf = layerNormForward(x, p('lnf.gamma'), p('lnf.beta'), rows, C);
  const logits = linearForward(lnf.out, p(lmHeadName(config)), undefined, linear(C, V));
  const values = config.valueHead
    ? linearForward(lnf.out, p('value_head.w'), p('value_head.b'), linear(C, 1))
    : undefined;
  return { logits, values, acts: { tokens, batch, seq, blocks, final: x, lnf } };
}

/**
 * dlogits (B, T, V) [and dvalues (B, T)] → gradients of every parameter, in a flat array with the
 * parameters' layout (padding zero).
 */
export function transformerBackward<T extends Floats>(
  config: TransformerConfig,
  layout: ParamLayout,
  params: T,
  acts: TransformerActivations<T>,
  dlogits: T,
  dvalues?: T,
): T {
  const { width: C, heads, vocab: V, context } = config;
  const { batch, seq } = acts;
  const rows = batch * seq;
  checkLength(OP, 'dlogits', dlogits, rows * V, 'batch × seq × vocab');
  if (dvalues) {
    if (!config.valueHead)
      throw new Error('transformerBackward: dvalues given without a value head');
    checkLength(OP, 'dvalues', dvalues, rows, 'batch × seq');
  }
  const p = (name: string) => layout.view(params, name);
  const grads = zerosLike(params, layout.total);
  const g = (name: string) => layout.view(grads, name);
  const linear = (inDim: number, outDim: number): LinearShape => ({ rows, inDim, outDim });
  const attnShape = { batch, seq, heads, channels: C };
  const rotary = usesRotary(config) ? rotaryTableFor(config) : undefined;

  // Head(s): the LM head writes into dwte when tied; the embedding backward adds its part later.
  const lnfShape = linear(C, V);
  const head = linearBackward(dlogits, acts.lnf.out, p(lmHeadName(config)), lnfShape);
  g(lmHeadName(config)).set(head.dw);
  const dlnf = head.dx;
  if (dvalues) {
    const value = linearBackward(dvalues, acts.lnf.out, p('value_head.w'), linear(C, 1), {
      hasBias: true,
    });
    addInto(dlnf, value.dx);
    g('value_head.w').set(value.dw);
    g('value_head.b').set(value.db!);
  }
  const lnfGrads = layerNormBackward(
    dlnf,
    acts.final,
    p('lnf.gamma'),
    acts.lnf.mean,
    acts.lnf.rstd,
    rows,
    C,
  );
  g('lnf.gamma').set(lnfGrads.dgamma);
  g('lnf.beta').set(lnfGrads.dbeta);
  let dx = lnfGrads.dx; // gradient of the residual stream, (rows, C)

  for (let l = config.layers - 1; l >= 0; l--) {
    const n = blockParamNames(l);
    const a = acts.blocks[l]!;
    // MLP branch: x_out = res1 + proj(gelu(fc(ln2(res1)))).
    const mlpProj = linearBackward(dx, a.gelu, p(n.mlpProjW), linear(4 * C, C), { hasBias: true });
    const dfc = activationBackward(mlpProj.dx, a.fc, 'gelu');
    const fc = linearBackward(dfc, a.ln2.out, p(n.fcW), linear(C, 4 * C), { hasBias: true });
    const ln2 = layerNormBackward(fc.dx, a.res1, p(n.ln2Gamma), a.ln2.mean, a.ln2.rstd, rows, C);
    const dres1 = add(dx, ln2.dx);
    // Attention branch: res1 = input + proj(attn(qkv(ln1(input)))).
    const proj = linearBackward(dres1, a.attn, p(n.projW), linear(C, C), { hasBias: true });
    const dRotated = attentionBackward(proj.dx, a.qkv, a.probs, attnShape);
    const dqkv = rotary ? rotaryBackward(dRotated, rotary, attnShape) : dRotated;
    const qkv = linearBackward(dqkv, a.ln1.out, p(n.qkvW), linear(C, 3 * C), { hasBias: true });
    const ln1 = layerNormBackward(qkv.dx, a.input, p(n.ln1Gamma), a.ln1.mean, a.ln1.rstd, rows, C);
    dx = add(dres1, ln1.dx);

    g(n.mlpProjW).set(mlpProj.dw);
    g(n.mlpProjB).set(mlpProj.db!);
    g(n.fcW).set(fc.dw);
    g(n.fcB).set(fc.db!);
    g(n.ln2Gamma).set(ln2.dgamma);
    g(n.ln2Beta).set(ln2.dbeta);
    g(n.projW).set(proj.dw);
    g(n.projB).set(proj.db!);
    g(n.qkvW).set(qkv.dw);
    g(n.qkvB).set(qkv.db!);
    g(n.ln1Gamma).set(ln1.dgamma);
    g(n.ln1Beta).set(ln1.dbeta);
  }

  // A rotary model has no wpe: no dwpe is computed (the GPU path binds no dwpe buffer either).
  const embed = embeddingBackward(
    dx,
    acts.tokens,
    { batch, seq, channels: C, vocab: V, maxSeq: context },
    {
      wpe: !rotary,
      ...(config.tiedEmbeddings ? { accumulateDwte: g('wte').slice() as T } : {}),
    },
  );
  g('wte').set(embed.dwte);
  if (embed.dwpe) g('wpe').set(embed.dwpe);
  return grads;
}
