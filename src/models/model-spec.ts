/**
 * ModelSpec: the one description of a decoder-only language model's architecture, for every
 * family the lab runs — the tiny GPT of its own lessons ('gpt') and the Hugging Face families
 * brought by a user ('llama' as SmolLM2 uses it, 'qwen2', 'qwen3'). Trainers, the worker,
 * checkpoints and run files see this type; each family maps its own configuration to and from it
 * (the tiny GPT: fromTransformerConfig / toTransformerConfig here; Hugging Face's config.json:
 * src/models/hf/).
 *
 * Shapes in comments: V = vocab, C = width, L = layers, NH = heads, NKV = kvHeads, hs = headDim,
 * F = mlpWidth.
 */
import { OpInputError } from '../ops/errors';
import { LAYER_NORM_DEFAULT_EPS } from '../ops/nn/layer-norm';
import { checkInt, checkOneOf, checkRange } from '../ops/validate';
import { describeValue } from '../util/json-checks';
import {
  checkTransformerConfig,
  rotaryBaseOf,
  type TransformerConfig,
  type PositionKind,
} from './transformer-config';

export const MODEL_FAMILIES = ['gpt', 'llama', 'qwen2', 'qwen3'] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

/** How a tensor is stored on the device. The CPU path always computes in f32. */
export const STORAGE_DTYPES = ['f32', 'f16', 'bf16'] as const;
export type StorageDtype = (typeof STORAGE_DTYPES)[number];

export interface ModelSpec {
  family: ModelFamily;
  /** Vocabulary size V: rows of the token embedding and of the LM head. */
  vocab: number;
  /** Longest sequence (prompt + completion) the model is run on; a learned position table's rows. */
  context: number;
  /** Width C (hidden_size, d_model). */
  width: number;
  /** Transformer blocks L (num_hidden_layers). */
  layers: number;
  /** Query heads NH (num_attention_heads). */
  heads: number;
  /** Key/value heads NKV (num_key_value_heads); divides NH (grouped-query attention). */
  kvHeads: number;
  /** Size of one head hs; NH·hs need not equal C (Qwen3 sets head_dim apart). */
  headDim: number;
  /** Inner width F of the MLP (intermediate_size; 4·C in GPT-2). */
  mlpWidth: number;
  /** 'gelu': proj(gelu(fc(x))) (GPT-2); 'swiglu': down(silu(gate(x)) ⊙ up(x)) (Llama, Qwen). */
  mlp: 'gelu' | 'swiglu';
  /** 'layernorm' with gain and shift (GPT-2); 'rmsnorm' with gain only (Llama, Qwen). */
  norm: 'layernorm' | 'rmsnorm';
  /** ε added to the variance (or mean square) under the square root. */
  normEps: number;
  /** 'learned': a position table (GPT-2's wpe); 'rotary': q and k rotated (rotate-half). */
  positions: PositionKind;
  /** The rotary base θ (rope_theta); meaningful with rotary positions only. */
  rotaryBase: number;
  /** Biases on the q, k and v projections (GPT-2, Qwen2; Llama's attention_bias). */
  qkvBias: boolean;
  /** Bias on the attention output projection (GPT-2; Llama's attention_bias). */
  outBias: boolean;
  /** Biases on the MLP's projections (GPT-2; Llama's mlp_bias). */
  mlpBias: boolean;
  /** A per-head RMSNorm on q and k before rotary (Qwen3). */
  qkNorm: boolean;
  /** The LM head is the token embedding (no lm_head tensor of its own). */
  tiedEmbeddings: boolean;
  /** A scalar value head on the final norm's output (a PPO critic sharing the trunk). */
  valueHead: boolean;
}

/** The ranges every family's spec must lie in (the families may be narrower, e.g. the tiny GPT). */
export const MODEL_SPEC_LIMITS = {
  vocab: [2, 1 << 20],
  context: [2, 1 << 17],
  width: [8, 16_384],
  layers: [1, 256],
  heads: [1, 256],
  kvHeads: [1, 256],
  headDim: [2, 1024],
  mlpWidth: [1, 1 << 17],
} as const;

const NORM_EPS_LIMITS = [1e-12, 1e-2] as const;
const ROTARY_BASE_LIMITS = [100, 1e9] as const;

const OP = 'ModelSpec';
const BOOLEAN_FIELDS = [
  'qkvBias',
  'outBias',
  'mlpBias',
  'qkNorm',
  'tiedEmbeddings',
  'valueHead',
] as const;

/**
 * Reads a ModelSpec from untrusted JSON (a checkpoint, a run file): every field checked, an
 * unknown field refused. Throws OpInputError naming the field and its valid range or choices.
 */
export function readModelSpec(json: unknown): ModelSpec {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new OpInputError(OP, 'spec', `must be an object, got ${describeValue(json)}`);
  }
  const record = json as Record<string, unknown>;
  const known = new Set<string>(SPEC_FIELDS);
  for (const key of Object.keys(record)) {
    if (!known.has(key)) {
      throw new OpInputError(OP, describeValue(key), `is not a field of a model spec`);
    }
  }
  const spec = {} as Record<string, unknown>;
  for (const field of SPEC_FIELDS) {
    if (!Object.hasOwn(record, field)) throw new OpInputError(OP, field, 'is missing');
    const value = record[field];
    // Every string field is a short choice: a long one is refused before a message quotes it.
    if (typeof value === 'string' && value.length > 40) {
      throw new OpInputError(OP, field, `must be a short choice, got ${describeValue(value)}`);
    }
    spec[field] = value;
  }
  checkModelSpec(spec as unknown as ModelSpec);
  return spec as unknown as ModelSpec;
}

/** The spec as plain JSON, fields in declaration order (what checkpoints and run files store). */
export function writeModelSpec(spec: ModelSpec): Record<string, unknown> {
  checkModelSpec(spec);
  const out: Record<string, unknown> = {};
  for (const field of SPEC_FIELDS) out[field] = spec[field];
  return out;
}

/** Every field of ModelSpec, in the order writeModelSpec writes them. */
const SPEC_FIELDS = [
  'family',
  'vocab',
  'context',
  'width',
  'layers',
  'heads',
  'kvHeads',
  'headDim',
  'mlpWidth',
  'mlp',
  'norm',
  'normEps',
  'positions',
  'rotaryBase',
  ...BOOLEAN_FIELDS,
] as const satisfies readonly (keyof ModelSpec)[];

/** Throws OpInputError naming the first field out of range (or inconsistent with another). */
export function checkModelSpec(spec: ModelSpec): void {
  checkOneOf(OP, 'family', spec.family, MODEL_FAMILIES);
  for (const [field, [min, max]] of Object.entries(MODEL_SPEC_LIMITS)) {
    checkInt(OP, field, spec[field as keyof typeof MODEL_SPEC_LIMITS], min, max);
  }
  checkOneOf(OP, 'mlp', spec.mlp, ['gelu', 'swiglu']);
  checkOneOf(OP, 'norm', spec.norm, ['layernorm', 'rmsnorm']);
  checkOneOf(OP, 'positions', spec.positions, ['learned', 'rotary']);
  checkRange(OP, 'normEps', spec.normEps, ...NORM_EPS_LIMITS);
  checkRange(OP, 'rotaryBase', spec.rotaryBase, ...ROTARY_BASE_LIMITS);
  for (const field of BOOLEAN_FIELDS) checkOneOf(OP, field, spec[field], [true, false]);
  if (spec.heads % spec.kvHeads !== 0) {
    throw new OpInputError(
      OP,
      'kvHeads',
      `must divide heads (${spec.heads}) for grouped-query attention, got ${spec.kvHeads}`,
    );
  }
  if (spec.positions === 'rotary' && spec.headDim % 2 !== 0) {
    throw new OpInputError(OP, 'headDim', `must be even for rotary positions, got ${spec.headDim}`);
  }
  if (spec.qkNorm && spec.norm !== 'rmsnorm') {
    throw new OpInputError(OP, 'qkNorm', "needs norm 'rmsnorm' (Qwen3's per-head q/k norm)");
  }
}

/** The spec of the lab's tiny GPT with this configuration (GPT-2's architecture). */
export function fromTransformerConfig(config: TransformerConfig): ModelSpec {
  checkTransformerConfig(config);
  return {
    family: 'gpt',
    vocab: config.vocab,
    context: config.context,
    width: config.width,
    layers: config.layers,
    heads: config.heads,
    kvHeads: config.heads,
    headDim: config.width / config.heads,
    mlpWidth: 4 * config.width,
    mlp: 'gelu',
    norm: 'layernorm',
    normEps: LAYER_NORM_DEFAULT_EPS,
    positions: config.positions ?? 'learned',
    rotaryBase: rotaryBaseOf(config),
    qkvBias: true,
    outBias: true,
    mlpBias: true,
    qkNorm: false,
    tiedEmbeddings: config.tiedEmbeddings,
    valueHead: config.valueHead,
  };
}

/**
 * The tiny GPT's configuration of a 'gpt' spec; refuses a spec the tiny GPT cannot run (another
 * family, or GPT-2's fixed choices changed), naming the field. Round-trips fromTransformerConfig.
 */
export function toTransformerConfig(spec: ModelSpec): TransformerConfig {
  checkModelSpec(spec);
  if (spec.family !== 'gpt') {
    throw new OpInputError(OP, 'family', `must be 'gpt' for the tiny GPT, got '${spec.family}'`);
  }
  const config: TransformerConfig = {
    vocab: spec.vocab,
    context: spec.context,
    width: spec.width,
    layers: spec.layers,
    heads: spec.heads,
    tiedEmbeddings: spec.tiedEmbeddings,
    valueHead: spec.valueHead,
    ...(spec.positions === 'rotary'
      ? { positions: 'rotary' as const, rotaryBase: spec.rotaryBase }
      : {}),
  };
  const expected = fromTransformerConfig(config);
  for (const field of SPEC_FIELDS) {
    if (!Object.is(expected[field], spec[field])) {
      throw new OpInputError(
        OP,
        field,
        `must be ${describeValue(expected[field])} in a 'gpt' spec (GPT-2's architecture), got ${describeValue(spec[field])}`,
      );
    }
  }
  return config;
}

/** Parameter count of the model the spec describes (value head included when it has one). */
export function parameterCount(spec: ModelSpec): number {
  const { vocab: V, width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  const normParams = spec.norm === 'layernorm' ? 2 * C : C;
  const q = C * NH * hs + (spec.qkvBias ? NH * hs : 0);
  const kv = 2 * (C * NKV * hs + (spec.qkvBias ? NKV * hs : 0));
  const out = NH * hs * C + (spec.outBias ? C : 0);
  const qkNorm = spec.qkNorm ? 2 * hs : 0;
  const mlpMatrices = spec.mlp === 'swiglu' ? 3 : 2;
  const mlpBiases = spec.mlpBias ? (spec.mlp === 'swiglu' ? 2 * F + C : F + C) : 0;
  const block = 2 * normParams + q + kv + out + qkNorm + mlpMatrices * C * F + mlpBiases;
  const positions = spec.positions === 'learned' ? spec.context * C : 0;
  const head = spec.tiedEmbeddings ? 0 : V * C;
  const value = spec.valueHead ? C + 1 : 0;
  return V * C + positions + spec.layers * block + normParams + head + value;
}
