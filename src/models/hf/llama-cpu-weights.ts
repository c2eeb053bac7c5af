/**
 * The weights of a Llama-family model (Llama as SmolLM2 uses it, Qwen2, Qwen3) for the CPU
 * forward, taken from a name → array map under Hugging Face's tensor names, every shape checked
 * against the ModelSpec. Weights keep PyTorch's nn.Linear layout (out, in).
 *
 * Shapes: V = vocab, C = width, NH = heads, NKV = kvHeads, hs = headDim, F = mlpWidth.
 */
import { OpInputError } from '../../ops/errors';
import type { Floats } from '../../ops/nn/floats';
import { checkModelSpec, type ModelSpec } from '../model-spec';

export const LLAMA_CPU_FAMILIES = ['llama', 'qwen2', 'qwen3'] as const;

const OP = 'llamaCpu';

export interface LlamaLayerWeights<T extends Floats = Float32Array> {
  /** input_layernorm: (C). */
  inputNorm: T;
  /** q_proj: (NH·hs, C) and its bias (NH·hs) when spec.qkvBias. */
  q: T;
  qBias: T | undefined;
  /** k_proj, v_proj: (NKV·hs, C) and biases (NKV·hs) when spec.qkvBias. */
  k: T;
  kBias: T | undefined;
  v: T;
  vBias: T | undefined;
  /** q_norm, k_norm: (hs), Qwen3's per-head RMSNorm gains (spec.qkNorm). */
  qNorm: T | undefined;
  kNorm: T | undefined;
  /** o_proj: (C, NH·hs) and its bias (C) when spec.outBias. */
  o: T;
  oBias: T | undefined;
  /** post_attention_layernorm: (C). */
  postNorm: T;
  /** gate_proj, up_proj: (F, C); down_proj: (C, F); biases when spec.mlpBias. */
  gate: T;
  gateBias: T | undefined;
  up: T;
  upBias: T | undefined;
  down: T;
  downBias: T | undefined;
}

export interface LlamaCpuModel<T extends Floats = Float32Array> {
  spec: ModelSpec;
  /** embed_tokens: (V, C). */
  embed: T;
  layers: LlamaLayerWeights<T>[];
  /** model.norm: (C). */
  norm: T;
  /** lm_head: (V, C); the same array as `embed` when the embeddings are tied. */
  lmHead: T;
}

/** One tensor the model reads: its Hugging Face name and shape. */
export interface TensorEntry {
  name: string;
  shape: number[];
}

/** Refuses a spec the CPU forward cannot run, naming the field. */
export function checkLlamaSpec(spec: ModelSpec): void {
  checkModelSpec(spec);
  const wanted: [keyof ModelSpec, unknown, string][] = [
    ['mlp', 'swiglu', "'swiglu'"],
    ['norm', 'rmsnorm', "'rmsnorm'"],
    ['positions', 'rotary', "'rotary'"],
    ['valueHead', false, 'false'],
  ];
  if (!(LLAMA_CPU_FAMILIES as readonly string[]).includes(spec.family)) {
    throw new OpInputError(
      OP,
      'family',
      `must be one of 'llama', 'qwen2', 'qwen3', got '${spec.family}'`,
    );
  }
  for (const [field, value, text] of wanted) {
    if (spec[field] !== value) {
      throw new OpInputError(
        OP,
        field,
        `must be ${text} in a ${spec.family} model, got ${JSON.stringify(spec[field])}`,
      );
    }
  }
}

/** Every tensor of the model, in file order (layers in order), under Hugging Face's names. */
export function llamaTensorEntries(spec: ModelSpec): TensorEntry[] {
  checkLlamaSpec(spec);
  const { vocab: V, width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  const entries: TensorEntry[] = [{ name: 'model.embed_tokens.weight', shape: [V, C] }];
  for (let n = 0; n < spec.layers; n++) {
    const p = `model.layers.${n}.`;
    const linear = (name: string, out: number, inDim: number, bias: boolean) => {
      entries.push({ name: `${p}${name}.weight`, shape: [out, inDim] });
      if (bias) entries.push({ name: `${p}${name}.bias`, shape: [out] });
    };
    entries.push({ name: `${p}input_layernorm.weight`, shape: [C] });
    linear('self_attn.q_proj', NH * hs, C, spec.qkvBias);
    linear('self_attn.k_proj', NKV * hs, C, spec.qkvBias);
    linear('self_attn.v_proj', NKV * hs, C, spec.qkvBias);
    if (spec.qkNorm) {
      entries.push({ name: `${p}self_attn.q_norm.weight`, shape: [hs] });
      entries.push({ name: `${p}self_attn.k_norm.weight`, shape: [hs] });
    }
    linear('self_attn.o_proj', C, NH * hs, spec.outBias);
    entries.push({ name: `${p}post_attention_layernorm.weight`, shape: [C] });
    linear('mlp.gate_proj', F, C, spec.mlpBias);
    linear('mlp.up_proj', F, C, spec.mlpBias);
    linear('mlp.down_proj', C, F, spec.mlpBias);
  }
  entries.push({ name: 'model.norm.weight', shape: [C] });
  if (!spec.tiedEmbeddings) entries.push({ name: 'lm_head.weight', shape: [V, C] });
  return entries;
}

/**
 * The model of `spec` from `weights` (Hugging Face names → arrays). Every tensor the spec needs
 * must be present with its exact element count; tensors it does not use are ignored (a tied
 * checkpoint that also stores lm_head.weight, a rotary inv_freq buffer). The arrays are used in
 * place, not copied.
 */
export function llamaModelFromWeights<T extends Floats>(
  spec: ModelSpec,
  weights: ReadonlyMap<string, T>,
): LlamaCpuModel<T> {
  const entries = llamaTensorEntries(spec);
  const byName = new Map<string, T>();
  for (const { name, shape } of entries) {
    const tensor = weights.get(name);
    if (!tensor) throw new OpInputError(OP, 'weights', `is missing the tensor '${name}'`);
    const size = shape.reduce((a, b) => a * b, 1);
    if (tensor.length !== size) {
      throw new OpInputError(
        OP,
        `weights['${name}']`,
        `must have ${shape.join(' × ')} = ${size} elements, got ${tensor.length}`,
      );
    }
    byName.set(name, tensor);
  }
  const get = (name: string): T => byName.get(name)!;
  const maybe = (name: string): T | undefined => byName.get(name);
  const layers: LlamaLayerWeights<T>[] = [];
  for (let n = 0; n < spec.layers; n++) {
    const p = `model.layers.${n}.`;
    layers.push({
      inputNorm: get(`${p}input_layernorm.weight`),
      q: get(`${p}self_attn.q_proj.weight`),
      qBias: maybe(`${p}self_attn.q_proj.bias`),
      k: get(`${p}self_attn.k_proj.weight`),
      kBias: maybe(`${p}self_attn.k_proj.bias`),
      v: get(`${p}self_attn.v_proj.weight`),
      vBias: maybe(`${p}self_attn.v_proj.bias`),
      qNorm: maybe(`${p}self_attn.q_norm.weight`),
      kNorm: maybe(`${p}self_attn.k_norm.weight`),
      o: get(`${p}self_attn.o_proj.weight`),
      oBias: maybe(`${p}self_attn.o_proj.bias`),
      postNorm: get(`${p}post_attention_layernorm.weight`),
      gate: get(`${p}mlp.gate_proj.weight`),
      gateBias: maybe(`${p}mlp.gate_proj.bias`),
      up: get(`${p}mlp.up_proj.weight`),
      upBias: maybe(`${p}mlp.up_proj.bias`),
      down: get(`${p}mlp.down_proj.weight`),
      downBias: maybe(`${p}mlp.down_proj.bias`),
    });
  }
  const embed = get('model.embed_tokens.weight');
  return {
    spec,
    embed,
    layers,
    norm: get('model.norm.weight'),
    lmHead: spec.tiedEmbeddings ? embed : get('lm_head.weight'),
  };
}
