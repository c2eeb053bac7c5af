/**
 * The backward of the Llama-family CPU forward (llama-cpu.ts): every op's own backward from
 * src/ops/nn, run in reverse over the activations the forward kept, so a later LoRA backward can
 * take the same path and stop at the adapters. Gradients come back under Hugging Face's tensor
 * names, with the forward's shapes; tied embeddings get the LM head's and the lookup's gradients
 * summed into model.embed_tokens.weight.
 *
 * Per block, reversed (x → xMid = x + o(attn) → out = xMid + down(h)):
 *   dxMid = dout + rmsnorm_post′(gate′(dgate) + up′(dup))        dgate, dup = swiglu′(down′(dout))
 *   dx    = dxMid + rmsnorm_in′(q′(dq) + k′(dk) + v′(dv))         dq, dk from rotary′ and q/k norm′
 */
import { add } from '../../ops/nn/add';
import { gqaAttentionBackward } from '../../ops/nn/attention-gqa';
import { embeddingBackward } from '../../ops/nn/embedding';
import { type Floats } from '../../ops/nn/floats';
import { linearBackward } from '../../ops/nn/linear';
import { rmsNormBackward } from '../../ops/nn/rms-norm';
import { rotaryHeadsBackward } from '../../ops/nn/rotary-heads';
import { swigluBackward } from '../../ops/nn/swiglu';
import { checkLength } from '../../ops/validate';
import { type LlamaForward, llamaRotaryTable } from './llama-cpu';
import type { LlamaCpuModel } from './llama-cpu-weights';

/**
 * Gradients of L with respect to every weight, given dLogits = ∂L/∂logits (B, T, V) and the
 * forward that produced the logits. Returns name → gradient (same length as the weight).
 */
export function llamaBackward<T extends Floats>(
  model: LlamaCpuModel<T>,
  forward: LlamaForward<T>,
  dLogits: T,
): Map<string, T> {
  const { spec } = model;
  const { vocab: V, width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  const acts = forward.activations;
  const { batch, seq, positions } = acts;
  const rows = batch * seq;
  checkLength('llamaBackward', 'dLogits', dLogits, rows * V, 'B × T × V');
  const grads = new Map<string, T>();
  const table = llamaRotaryTable(model, seq);

  const head = linearBackward(
    dLogits,
    acts.xnFinal,
    model.lmHead,
    { rows, inDim: C, outDim: V },
    {
      hasBias: false,
    },
  );
  const finalNorm = rmsNormBackward(head.dx, acts.xFinal, model.norm, acts.finalRstd, rows, C);
  grads.set('model.norm.weight', finalNorm.dw);
  let dx = finalNorm.dx; // ∂L/∂(the last block's output)

  for (let l = spec.layers - 1; l >= 0; l--) {
    const layer = model.layers[l]!;
    const a = acts.layers[l]!;
    const p = `model.layers.${l}.`;
    const setLinear = (name: string, g: { dw: T; db: T | undefined }) => {
      grads.set(`${p}${name}.weight`, g.dw);
      if (g.db) grads.set(`${p}${name}.bias`, g.db);
    };
    // MLP: out = xMid + down(silu(gate(xn2)) ⊙ up(xn2)).
    const down = linearBackward(
      dx,
      a.h,
      layer.down,
      { rows, inDim: F, outDim: C },
      {
        hasBias: !!layer.downBias,
      },
    );
    setLinear('mlp.down_proj', down);
    const { dg, du } = swigluBackward(down.dx, a.gate, a.up);
    const gate = linearBackward(
      dg,
      a.xn2,
      layer.gate,
      { rows, inDim: C, outDim: F },
      {
        hasBias: !!layer.gateBias,
      },
    );
    const up = linearBackward(
      du,
      a.xn2,
      layer.up,
      { rows, inDim: C, outDim: F },
      {
        hasBias: !!layer.upBias,
      },
    );
    setLinear('mlp.gate_proj', gate);
    setLinear('mlp.up_proj', up);
    const post = rmsNormBackward(add(gate.dx, up.dx), a.xMid, layer.postNorm, a.postRstd, rows, C);
    grads.set(`${p}post_attention_layernorm.weight`, post.dw);
    const dxMid = add(dx, post.dx);

    // Attention: xMid = x + o(attention(rotary(norm(q)), rotary(norm(k)), v)).
    const o = linearBackward(
      dxMid,
      a.attn,
      layer.o,
      { rows, inDim: NH * hs, outDim: C },
      {
        hasBias: !!layer.oBias,
      },
    );
    setLinear('self_attn.o_proj', o);
    const attention = gqaAttentionBackward(o.dx, a.qRot, a.kRot, a.v, a.probs, {
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
      grads.set(`${p}self_attn.q_norm.weight`, qn.dw);
      grads.set(`${p}self_attn.k_norm.weight`, kn.dw);
      dq = qn.dx;
      dk = kn.dx;
    }
    const hasBias = !!layer.qBias;
    const q = linearBackward(dq, a.xn, layer.q, { rows, inDim: C, outDim: NH * hs }, { hasBias });
    const k = linearBackward(dk, a.xn, layer.k, { rows, inDim: C, outDim: NKV * hs }, { hasBias });
    const v = linearBackward(
      attention.dv,
      a.xn,
      layer.v,
      { rows, inDim: C, outDim: NKV * hs },
      {
        hasBias,
      },
    );
    setLinear('self_attn.q_proj', q);
    setLinear('self_attn.k_proj', k);
    setLinear('self_attn.v_proj', v);
    const input = rmsNormBackward(
      add(add(q.dx, k.dx), v.dx),
      a.x,
      layer.inputNorm,
      a.inputRstd,
      rows,
      C,
    );
    grads.set(`${p}input_layernorm.weight`, input.dw);
    dx = add(dxMid, input.dx);
  }

  const embed = embeddingBackward(
    dx,
    acts.ids,
    { batch, seq, channels: C, vocab: V, maxSeq: seq },
    { wpe: false, ...(spec.tiedEmbeddings ? { accumulateDwte: head.dw } : {}) },
  );
  grads.set('model.embed_tokens.weight', embed.dwte);
  if (!spec.tiedEmbeddings) grads.set('lm_head.weight', head.dw);
  return grads;
}
