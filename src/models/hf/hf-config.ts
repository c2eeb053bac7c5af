/**
 * A Hugging Face config.json to and from the lab's ModelSpec, for the families the lab runs:
 * LlamaForCausalLM (model_type "llama", as SmolLM2 uses it), Qwen2ForCausalLM ("qwen2") and
 * Qwen3ForCausalLM ("qwen3").
 *
 * A key a real checkpoint always writes (transformers writes every model-specific key) is
 * required; a key a hand-written config may leave out takes the family's default in transformers'
 * configuration classes. Features the lab does not run yet (rope_scaling, Qwen2's sliding window,
 * an activation other than SiLU) are refused by name rather than run wrong.
 */
import { OpInputError } from '../../ops/errors';
import { describeValue } from '../../util/json-checks';
import { checkModelSpec, MODEL_SPEC_LIMITS, type ModelFamily, type ModelSpec } from '../model-spec';

const FILE = 'config.json';

export type HfFamily = Exclude<ModelFamily, 'gpt'>;

const ARCHITECTURES: Record<HfFamily, string> = {
  llama: 'LlamaForCausalLM',
  qwen2: 'Qwen2ForCausalLM',
  qwen3: 'Qwen3ForCausalLM',
};

/** transformers' defaults for keys a hand-written config may omit (LlamaConfig, Qwen2Config, Qwen3Config). */
const DEFAULTS: Record<HfFamily, { context: number; normEps: number; ropeTheta: number }> = {
  llama: { context: 2048, normEps: 1e-6, ropeTheta: 10_000 },
  qwen2: { context: 32_768, normEps: 1e-6, ropeTheta: 10_000 },
  qwen3: { context: 32_768, normEps: 1e-6, ropeTheta: 10_000 },
};

function fail(key: string, message: string): never {
  throw new OpInputError(FILE, key, message);
}

function int(
  json: Record<string, unknown>,
  key: string,
  range: readonly [number, number],
  fallback?: number,
): number {
  const value = Object.hasOwn(json, key) ? json[key] : fallback;
  if (value === undefined) fail(key, `is missing (an integer in [${range[0]}, ${range[1]}])`);
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < range[0] ||
    value > range[1]
  ) {
    fail(key, `must be an integer in [${range[0]}, ${range[1]}], got ${describeValue(value)}`);
  }
  return value;
}

function num(
  json: Record<string, unknown>,
  key: string,
  range: readonly [number, number],
  fallback: number,
): number {
  const value = Object.hasOwn(json, key) ? json[key] : fallback;
  if (typeof value !== 'number' || !(value >= range[0] && value <= range[1])) {
    fail(key, `must be a number in [${range[0]}, ${range[1]}], got ${describeValue(value)}`);
  }
  return value;
}

function bool(json: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = Object.hasOwn(json, key) ? json[key] : fallback;
  if (typeof value !== 'boolean') fail(key, `must be true or false, got ${describeValue(value)}`);
  return value;
}

/** The ModelSpec of a config.json (parsed JSON); throws OpInputError naming the key. */
export function fromHfConfig(json: unknown): ModelSpec {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new OpInputError(FILE, '(file)', `must be a JSON object, got ${describeValue(json)}`);
  }
  const config = json as Record<string, unknown>;
  const family = config.model_type;
  if (family !== 'llama' && family !== 'qwen2' && family !== 'qwen3') {
    fail('model_type', `must be one of "llama", "qwen2", "qwen3", got ${describeValue(family)}`);
  }
  const architectures = config.architectures;
  if (architectures !== undefined) {
    const expected = ARCHITECTURES[family];
    if (
      !Array.isArray(architectures) ||
      architectures.length !== 1 ||
      architectures[0] !== expected
    ) {
      fail(
        'architectures',
        `must be ["${expected}"] for model_type "${family}", got ${JSON.stringify(architectures)?.slice(0, 80)}`,
      );
    }
  }
  const act = config.hidden_act ?? 'silu';
  if (act !== 'silu') fail('hidden_act', `must be "silu" (SwiGLU), got ${describeValue(act)}`);
  if (config.rope_scaling !== undefined && config.rope_scaling !== null) {
    fail(
      'rope_scaling',
      `must be null: scaled rotary positions are not supported yet, got ${JSON.stringify(config.rope_scaling).slice(0, 80)}`,
    );
  }
  if (config.rope_interleaved === true) {
    fail(
      'rope_interleaved',
      'must be false: the lab rotates halves (rotate_half), as transformers does',
    );
  }
  if (config.use_mrope === true) {
    fail('use_mrope', 'must be false: multimodal rotary positions are not supported');
  }
  if (family !== 'llama' && config.use_sliding_window === true) {
    fail('use_sliding_window', 'must be false: sliding-window attention is not supported yet');
  }
  const limits = MODEL_SPEC_LIMITS;
  const defaults = DEFAULTS[family];
  const width = int(config, 'hidden_size', limits.width);
  const heads = int(config, 'num_attention_heads', limits.heads);
  const kvHeads = int(config, 'num_key_value_heads', limits.kvHeads, heads);
  if (heads % kvHeads !== 0) {
    fail('num_key_value_heads', `must divide num_attention_heads (${heads}), got ${kvHeads}`);
  }
  // Llama and Qwen2 derive head_dim from the width; Qwen3Config defaults it to 128 on its own.
  const derived = width % heads === 0 ? width / heads : undefined;
  const headDim = int(config, 'head_dim', limits.headDim, family === 'qwen3' ? 128 : derived);
  if (headDim % 2 !== 0) fail('head_dim', `must be even for rotary positions, got ${headDim}`);
  // Llama's attention_bias puts a bias on q, k, v and o; Qwen2 has q/k/v biases and no o bias;
  // Qwen3's attention_bias (false in the released models) is Llama's.
  const attentionBias = family === 'qwen2' ? false : bool(config, 'attention_bias', false);
  const mlpBias = family === 'llama' ? bool(config, 'mlp_bias', false) : false;
  const spec: ModelSpec = {
    family,
    vocab: int(config, 'vocab_size', limits.vocab),
    context: int(config, 'max_position_embeddings', limits.context, defaults.context),
    width,
    layers: int(config, 'num_hidden_layers', limits.layers),
    heads,
    kvHeads,
    headDim,
    mlpWidth: int(config, 'intermediate_size', limits.mlpWidth),
    mlp: 'swiglu',
    norm: 'rmsnorm',
    normEps: num(config, 'rms_norm_eps', [1e-12, 1e-2], defaults.normEps),
    positions: 'rotary',
    rotaryBase: num(config, 'rope_theta', [100, 1e9], defaults.ropeTheta),
    qkvBias: family === 'qwen2' ? true : attentionBias,
    outBias: attentionBias,
    mlpBias,
    qkNorm: family === 'qwen3',
    tiedEmbeddings: bool(config, 'tie_word_embeddings', false),
    valueHead: false,
  };
  checkModelSpec(spec);
  return spec;
}

/** The checkpoint's dtype as config.json states it ("torch_dtype", or "dtype" in newer files). */
export function hfConfigDtype(json: Record<string, unknown>): string | undefined {
  const value = json.torch_dtype ?? json.dtype;
  return typeof value === 'string' ? value.slice(0, 20) : undefined;
}

/**
 * A config.json for `spec` (the keys fromHfConfig reads); refuses a spec its family cannot state,
 * naming the field (e.g. Qwen2 without q/k/v biases).
 */
export function toHfConfig(spec: ModelSpec): Record<string, unknown> {
  checkModelSpec(spec);
  const family = spec.family;
  if (family === 'gpt') {
    throw new OpInputError(
      'toHfConfig',
      'family',
      "must be 'llama', 'qwen2' or 'qwen3', got 'gpt'",
    );
  }
  const expect = (field: keyof ModelSpec, value: unknown) => {
    if (spec[field] !== value) {
      throw new OpInputError(
        'toHfConfig',
        field,
        `must be ${describeValue(value)} for family '${family}', got ${describeValue(spec[field])}`,
      );
    }
  };
  expect('mlp', 'swiglu');
  expect('norm', 'rmsnorm');
  expect('positions', 'rotary');
  expect('valueHead', false);
  expect('qkNorm', family === 'qwen3');
  if (family === 'qwen2') {
    expect('qkvBias', true);
    expect('outBias', false);
  } else {
    expect('qkvBias', spec.outBias); // attention_bias: all four projections or none
  }
  if (family !== 'llama') expect('mlpBias', false);
  const config: Record<string, unknown> = {
    architectures: [ARCHITECTURES[family]],
    model_type: family,
    vocab_size: spec.vocab,
    hidden_size: spec.width,
    intermediate_size: spec.mlpWidth,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.kvHeads,
    head_dim: spec.headDim,
    hidden_act: 'silu',
    max_position_embeddings: spec.context,
    rms_norm_eps: spec.normEps,
    rope_theta: spec.rotaryBase,
    rope_scaling: null,
    tie_word_embeddings: spec.tiedEmbeddings,
  };
  if (family !== 'qwen2') config.attention_bias = spec.outBias;
  if (family === 'llama') config.mlp_bias = spec.mlpBias;
  if (family !== 'llama') config.use_sliding_window = false;
  return config;
}
