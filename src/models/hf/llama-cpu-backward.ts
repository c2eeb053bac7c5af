/**
 * The backward of the Llama-family CPU forward (llama-cpu.ts): every op's own backward from
 * src/ops/nn, run in reverse over the activations the forward kept. Two uses share one walk:
 *
 * - llamaBackward: full fine-tuning. Gradients of every weight under Hugging Face's tensor names,
 *   with the forward's shapes; tied embeddings get the LM head's and the lookup's gradients
 *   summed into model.embed_tokens.weight.
 * - llamaLoraBackward: a frozen base with LoRA adapters (llama-lora.ts). Only the adapters get
 *   gradients (one flat array in the 'lora' group's layout): through the base only dx = dy·W is
 *   computed (linearInputGrad), never a dW, and the embedding's backward is skipped.
 *
 * Per block, reversed (x → xMid = x + o(attn) → out = xMid + down(h)):
 *   dxMid = dout + rmsnorm_post′(gate′(dgate) + up′(dup))        dgate, dup = swiglu′(down′(dout))
 *   dx    = dxMid + rmsnorm_in′(q′(dq) + k′(dk) + v′(dv))         dq, dk from rotary′ and q/k norm′
 * where each projection′ is the linear layer's backward plus, where it has an adapter, the
 * adapter's (its dx added to the layer's).
 */
import { OpInputError } from '../../ops/errors';
import { add } from '../../ops/nn/add';
import { gqaAttentionBackward } from '../../ops/nn/attention-gqa';
import { embeddingBackward } from '../../ops/nn/embedding';
import { type Floats, zerosLike } from '../../ops/nn/floats';
import { linearBackward, linearInputGrad, type LinearShape } from '../../ops/nn/linear';
import { loraBackward } from '../../ops/nn/lora';
import { rmsNormBackward } from '../../ops/nn/rms-norm';
import { rotaryHeadsBackward } from '../../ops/nn/rotary-heads';
import { swigluBackward } from '../../ops/nn/swiglu';
import { checkLength } from '../../ops/validate';
import { type LlamaForward, llamaRotaryTable } from './llama-cpu';
import type { LlamaCpuModel } from './llama-cpu-weights';
import { type LlamaLora, type LoraModule, loraModulePath, loraTensorName } from './llama-lora';

/** What the walk computes: base gradients (full fine-tuning) or none (frozen base). */
interface Walk<T extends Floats> {
  /** name → gradient of every base weight, or undefined when the base is frozen. */
  base: Map<string, T> | undefined;
  /** Adapter gradients in the 'lora' group's layout, when the forward applied adapters. */
  lora: T | undefined;
}

/**
 * Gradients of L with respect to every weight, given dLogits = ∂L/∂logits (B, T, V) and the
 * forward that produced the logits. Returns name → gradient (same length as the weight). When the
 * forward applied adapters, the base gradients are those of the adapted model.
 */
export function llamaBackward<T extends Floats>(
  model: LlamaCpuModel<T>,
  forward: LlamaForward<T>,
  dLogits: T,
): Map<string, T> {
  return walkBackward(model, forward, dLogits, true).base!;
}

/**
 * The adapters' gradients with the base frozen, given dLogits = ∂L/∂logits (B, T, V) and a forward
 * that applied adapters: one flat array in the layout of forward.activations.lora.group (AdamW's
 * input), and name → view of it under PEFT's tensor names.
 */
export function llamaLoraBackward<T extends Floats>(
  model: LlamaCpuModel<T>,
  forward: LlamaForward<T>,
  dLogits: T,
): { grads: T; byName: Map<string, T> } {
  const lora = forward.activations.lora;
  if (!lora) {
    throw new OpInputError(
      'llamaLoraBackward',
      'forward',
      'ran without adapters: pass { lora } to llamaForward / llamaScore',
    );
  }
  const grads = walkBackward(model, forward, dLogits, false).lora!;
  const { layout } = lora.group;
  return {
    grads,
    byName: new Map(layout.entries.map((e) => [e.name, layout.view(grads, e.name)])),
  };
}

function walkBackward<T extends Floats>(
  model: LlamaCpuModel<T>,
  forward: LlamaForward<T>,
  dLogits: T,
  trainBase: boolean,
): Walk<T> {
  const { spec } = model;
  const { vocab: V, width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  const acts = forward.activations;
  const { batch, seq, positions } = acts;
  const rows = batch * seq;
  checkLength('llamaBackward', 'dLogits', dLogits, rows * V, 'B × T × V');
  const lora: LlamaLora<T> | undefined = acts.lora;
  const walk: Walk<T> = {
    base: trainBase ? new Map<string, T>() : undefined,
    lora: lora ? zerosLike(dLogits, lora.group.layout.total) : undefined,
  };
  const setBase = (name: string, grad: T) => walk.base?.set(name, grad);
  const table = llamaRotaryTable(model, seq);

  const headShape: LinearShape = { rows, inDim: C, outDim: V };
  let headDw: T | undefined;
  let dHead: T;
  if (trainBase) {
    const head = linearBackward(dLogits, acts.xnFinal, model.lmHead, headShape, { hasBias: false });
    headDw = head.dw;
    dHead = head.dx;
  } else {
    dHead = linearInputGrad(dLogits, model.lmHead, headShape);
  }
  const finalNorm = rmsNormBackward(dHead, acts.xFinal, model.norm, acts.finalRstd, rows, C);
  setBase('model.norm.weight', finalNorm.dw);
  let dx = finalNorm.dx; // ∂L/∂(the last block's output)

  for (let l = spec.layers - 1; l >= 0; l--) {
    const layer = model.layers[l]!;
    const a = acts.layers[l]!;
    const p = `model.layers.${l}.`;
    /**
     * The backward of one projection y = input·Wᵀ (+ b) (+ its adapter): returns ∂L/∂input, and
     * records dW, db (base trained) and dA, dB (adapted).
     */
    const project = (
      module: LoraModule,
      dy: T,
      input: T,
      w: T,
      hasBias: boolean,
      shape: LinearShape,
    ): T => {
      let dInput: T;
      if (trainBase) {
        const g = linearBackward(dy, input, w, shape, { hasBias });
        setBase(`${loraModulePath(l, module)}.weight`, g.dw);
        if (g.db) setBase(`${loraModulePath(l, module)}.bias`, g.db);
        dInput = g.dx;
      } else {
        dInput = linearInputGrad(dy, w, shape);
      }
      const adapter = lora?.layers[l]![module];
      const u = a.loraU[module];
      if (!lora || !adapter || !u) return dInput;
      const rank = lora.settings.rank;
      const g = loraBackward(dy, input, u, adapter.a, adapter.b, { ...shape, rank }, lora.scale, {
        accumulateDx: dInput,
      });
      const { layout } = lora.group;
      layout.view(walk.lora!, loraTensorName(l, module, 'A')).set(g.dA);
      layout.view(walk.lora!, loraTensorName(l, module, 'B')).set(g.dB);
      return g.dx;
    };

    // MLP: out = xMid + down(silu(gate(xn2)) ⊙ up(xn2)).
    const dh = project('down_proj', dx, a.h, layer.down, !!layer.downBias, {
      rows,
      inDim: F,
      outDim: C,
    });
    const { dg, du } = swigluBackward(dh, a.gate, a.up);
    const mlpShape: LinearShape = { rows, inDim: C, outDim: F };
    const dGateIn = project('gate_proj', dg, a.xn2, layer.gate, !!layer.gateBias, mlpShape);
    const dUpIn = project('up_proj', du, a.xn2, layer.up, !!layer.upBias, mlpShape);
    const post = rmsNormBackward(add(dGateIn, dUpIn), a.xMid, layer.postNorm, a.postRstd, rows, C);
    setBase(`${p}post_attention_layernorm.weight`, post.dw);
    const dxMid = add(dx, post.dx);

    // Attention: xMid = x + o(attention(rotary(norm(q)), rotary(norm(k)), v)).
    const dAttn = project('o_proj', dxMid, a.attn, layer.o, !!layer.oBias, {
      rows,
      inDim: NH * hs,
      outDim: C,
    });
    const attention = gqaAttentionBackward(dAttn, a.qRot, a.kRot, a.v, a.probs, {
      batch,
      seq,
      heads: NH,
      kvHeads: NKV,
      headSize: hs,
    });
    let dq = rotaryHeadsBackward(attention.dq, positions, table, { rows, heads: NH, headSize: hs });
    let dk = rotaryHeadsBackward(attention.dk, positions, table, {
      rows,
      heads: NKV,
      headSize: hs,
    });
    if (layer.qNorm && layer.kNorm && a.qNormRstd && a.kNormRstd) {
      const qn = rmsNormBackward(dq, a.q, layer.qNorm, a.qNormRstd, rows * NH, hs);
      const kn = rmsNormBackward(dk, a.k, layer.kNorm, a.kNormRstd, rows * NKV, hs);
      setBase(`${p}self_attn.q_norm.weight`, qn.dw);
      setBase(`${p}self_attn.k_norm.weight`, kn.dw);
      dq = qn.dx;
      dk = kn.dx;
    }
    const hasBias = !!layer.qBias;
    const qShape: LinearShape = { rows, inDim: C, outDim: NH * hs };
    const kvShape: LinearShape = { rows, inDim: C, outDim: NKV * hs };
    const dqIn = project('q_proj', dq, a.xn, layer.q, hasBias, qShape);
    const dkIn = project('k_proj', dk, a.xn, layer.k, hasBias, kvShape);
    const dvIn = project('v_proj', attention.dv, a.xn, layer.v, hasBias, kvShape);
    const input = rmsNormBackward(
      add(add(dqIn, dkIn), dvIn),
      a.x,
      layer.inputNorm,
      a.inputRstd,
      rows,
      C,
    );
    setBase(`${p}input_layernorm.weight`, input.dw);
    dx = add(dxMid, input.dx);
  }

  if (!trainBase) return walk; // the embedding is frozen: its gradient is not needed
  const embed = embeddingBackward(
    dx,
    acts.ids,
    { batch, seq, channels: C, vocab: V, maxSeq: seq },
    { wpe: false, ...(spec.tiedEmbeddings ? { accumulateDwte: headDw! } : {}) },
  );
  setBase('model.embed_tokens.weight', embed.dwte);
  if (!spec.tiedEmbeddings) setBase('lm_head.weight', headDw!);
  return walk;
}
