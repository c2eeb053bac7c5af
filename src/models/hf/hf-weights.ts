/**
 * The tensors a Hugging Face checkpoint of each family holds, by their names in the file, with
 * their shapes — as the ParamSpec list of the model's frozen 'base' parameter group, so the flat
 * layout (src/models/param-layout.ts) is the checkpoint's own naming.
 *
 * Shapes are PyTorch's nn.Linear [out, in]: q_proj [NH·hs, C], k_proj/v_proj [NKV·hs, C],
 * o_proj [C, NH·hs], gate_proj/up_proj [F, C], down_proj [C, F]; embed_tokens and lm_head [V, C];
 * every norm gain [C], Qwen3's q_norm/k_norm [hs] (one gain shared by all heads).
 */
import type { ModelSpec, StorageDtype } from '../model-spec';
import type { ParamGroup } from '../param-groups';
import { ParamLayout, type ParamSpec } from '../param-layout';

/** The std transformers initializes these families' matrices with (initializer_range). */
const INIT_STD = 0.02;

/** Every tensor the checkpoint of `spec` must hold, in the order transformers names them. */
export function hfParamSpecs(spec: ModelSpec): ParamSpec[] {
  if (spec.family === 'gpt')
    throw new Error("hfParamSpecs: the 'gpt' family has no Hugging Face layout");
  const { vocab: V, width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  const matrix = (name: string, shape: number[]): ParamSpec => ({
    name,
    shape,
    decay: true,
    init: { kind: 'normal', std: INIT_STD },
  });
  const gain = (name: string, size: number): ParamSpec => ({
    name,
    shape: [size],
    decay: false,
    init: { kind: 'ones' },
  });
  const bias = (name: string, size: number): ParamSpec => ({
    name,
    shape: [size],
    decay: false,
    init: { kind: 'zeros' },
  });
  const specs: ParamSpec[] = [matrix('model.embed_tokens.weight', [V, C])];
  for (let l = 0; l < spec.layers; l++) {
    const p = `model.layers.${l}`;
    specs.push(gain(`${p}.input_layernorm.weight`, C));
    const projections: [string, number, number][] = [
      ['q_proj', NH * hs, C],
      ['k_proj', NKV * hs, C],
      ['v_proj', NKV * hs, C],
      ['o_proj', C, NH * hs],
    ];
    for (const [proj, out, inp] of projections) {
      specs.push(matrix(`${p}.self_attn.${proj}.weight`, [out, inp]));
      if (proj === 'o_proj' ? spec.outBias : spec.qkvBias)
        specs.push(bias(`${p}.self_attn.${proj}.bias`, out));
    }
    if (spec.qkNorm) {
      specs.push(gain(`${p}.self_attn.q_norm.weight`, hs));
      specs.push(gain(`${p}.self_attn.k_norm.weight`, hs));
    }
    specs.push(gain(`${p}.post_attention_layernorm.weight`, C));
    const mlp: [string, number, number][] = [
      ['gate_proj', F, C],
      ['up_proj', F, C],
      ['down_proj', C, F],
    ];
    for (const [proj, out, inp] of mlp) {
      specs.push(matrix(`${p}.mlp.${proj}.weight`, [out, inp]));
      if (spec.mlpBias) specs.push(bias(`${p}.mlp.${proj}.bias`, out));
    }
  }
  specs.push(gain('model.norm.weight', C));
  if (!spec.tiedEmbeddings) specs.push(matrix('lm_head.weight', [V, C]));
  return specs;
}

/** The frozen 'base' group of a brought model, stored as `storage` on the device. */
export function hfBaseGroup(spec: ModelSpec, storage: StorageDtype = 'f16'): ParamGroup {
  const layout = new ParamLayout(hfParamSpecs(spec), storage);
  return { name: 'base', layout, storage, trainable: false };
}
