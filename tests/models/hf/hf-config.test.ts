import { describe, expect, it } from 'vitest';
import { fromHfConfig, hfConfigDtype, toHfConfig } from '../../../src/models/hf/hf-config';
import { readGenerationConfig } from '../../../src/models/hf/generation-config';
import { parameterCount } from '../../../src/models/model-spec';
import { SMOLLM2_135M } from '../../support/published-specs';

/** The published config.json files, as the Hub serves them. */
const SMOLLM2_135M_CONFIG = {
  architectures: ['LlamaForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 0,
  eos_token_id: 0,
  hidden_act: 'silu',
  hidden_size: 576,
  initializer_range: 0.041666666666666664,
  intermediate_size: 1536,
  is_llama_config: true,
  max_position_embeddings: 8192,
  mlp_bias: false,
  model_type: 'llama',
  num_attention_heads: 9,
  num_hidden_layers: 30,
  num_key_value_heads: 3,
  pretraining_tp: 1,
  rms_norm_eps: 1e-5,
  rope_interleaved: false,
  rope_scaling: null,
  rope_theta: 100000,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
  vocab_size: 49152,
};
const QWEN25_05B_CONFIG = {
  architectures: ['Qwen2ForCausalLM'],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151643,
  hidden_act: 'silu',
  hidden_size: 896,
  initializer_range: 0.02,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 24,
  model_type: 'qwen2',
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.40.1',
  use_cache: true,
  use_mrope: false,
  use_sliding_window: false,
  vocab_size: 151936,
};
const QWEN3_06B_CONFIG = {
  architectures: ['Qwen3ForCausalLM'],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: 'silu',
  hidden_size: 1024,
  initializer_range: 0.02,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  max_window_layers: 28,
  model_type: 'qwen3',
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: 'bfloat16',
  transformers_version: '4.51.0',
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

describe('config.json', () => {
  it('reads SmolLM2-135M, Qwen2.5-0.5B and Qwen3-0.6B to their published parameter counts', () => {
    expect(fromHfConfig(SMOLLM2_135M_CONFIG)).toEqual(SMOLLM2_135M);
    const qwen2 = fromHfConfig(QWEN25_05B_CONFIG);
    expect(qwen2).toMatchObject({
      family: 'qwen2',
      headDim: 64,
      qkvBias: true,
      outBias: false,
      qkNorm: false,
      normEps: 1e-6,
      rotaryBase: 1e6,
      context: 32_768,
    });
    const qwen3 = fromHfConfig(QWEN3_06B_CONFIG);
    expect(qwen3).toMatchObject({
      family: 'qwen3',
      headDim: 128,
      qkvBias: false,
      qkNorm: true,
      kvHeads: 8,
      context: 40_960,
    });
    expect(parameterCount(SMOLLM2_135M)).toBe(134_515_008);
    expect(parameterCount(qwen2)).toBe(494_032_768);
    expect(parameterCount(qwen3)).toBe(596_049_920);
    expect(hfConfigDtype(QWEN3_06B_CONFIG)).toBe('bfloat16');
  });

  it('writes each family back to a config.json it reads unchanged', () => {
    for (const config of [SMOLLM2_135M_CONFIG, QWEN25_05B_CONFIG, QWEN3_06B_CONFIG]) {
      const spec = fromHfConfig(config);
      const written = toHfConfig(spec);
      expect(fromHfConfig(JSON.parse(JSON.stringify(written)))).toEqual(spec);
      for (const key of ['hidden_size', 'num_key_value_heads', 'vocab_size', 'rope_theta']) {
        expect(written[key]).toBe(config[key as keyof typeof config]);
      }
    }
  });

  it("defaults kv heads to heads, head_dim to width/heads (Qwen3: 128), Llama's biases off", () => {
    const minimal = {
      model_type: 'llama',
      vocab_size: 100,
      hidden_size: 64,
      intermediate_size: 128,
      num_hidden_layers: 2,
      num_attention_heads: 4,
    };
    expect(fromHfConfig(minimal)).toMatchObject({
      kvHeads: 4,
      headDim: 16,
      context: 2048,
      normEps: 1e-6,
      rotaryBase: 10_000,
      tiedEmbeddings: false,
      qkvBias: false,
      outBias: false,
      mlpBias: false,
    });
    expect(fromHfConfig({ ...minimal, model_type: 'qwen3' }).headDim).toBe(128);
    expect(fromHfConfig({ ...minimal, attention_bias: true, mlp_bias: true })).toMatchObject({
      qkvBias: true,
      outBias: true,
      mlpBias: true,
    });
  });

  it.each([
    [
      { model_type: 'mistral' },
      'config.json: model_type must be one of "llama", "qwen2", "qwen3", got "mistral"',
    ],
    [{ architectures: ['Qwen2ForCausalLM'] }, 'architectures must be ["LlamaForCausalLM"]'],
    [{ hidden_act: 'gelu' }, 'hidden_act must be "silu"'],
    [
      { rope_scaling: { type: 'linear', factor: 2 } },
      'rope_scaling must be null: scaled rotary positions are not supported yet',
    ],
    [{ rope_interleaved: true }, 'rope_interleaved must be false'],
    [{ hidden_size: 7 }, 'hidden_size must be an integer in [8, 16384], got 7'],
    [{ hidden_size: '576' }, 'hidden_size must be an integer in [8, 16384], got "576"'],
    [{ num_key_value_heads: 4 }, 'num_key_value_heads must divide num_attention_heads (9), got 4'],
    [{ vocab_size: undefined }, 'vocab_size is missing'],
    [{ rms_norm_eps: 0 }, 'rms_norm_eps must be a number in [1e-12, 0.01], got 0'],
    [{ tie_word_embeddings: 'yes' }, 'tie_word_embeddings must be true or false'],
    [{ head_dim: 63 }, 'head_dim must be even'],
  ])('refuses %o naming the key', (change, message) => {
    const config: Record<string, unknown> = { ...SMOLLM2_135M_CONFIG, ...change };
    if ('vocab_size' in change) delete config.vocab_size;
    expect(() => fromHfConfig(config)).toThrow(message);
  });

  it("refuses Qwen2's sliding window when it is on", () => {
    expect(() => fromHfConfig({ ...QWEN25_05B_CONFIG, use_sliding_window: true })).toThrow(
      'use_sliding_window must be false',
    );
  });

  it('refuses a spec its family cannot state in config.json', () => {
    expect(() => toHfConfig({ ...SMOLLM2_135M, family: 'qwen2' })).toThrow(
      "qkvBias must be true for family 'qwen2'",
    );
    expect(() => toHfConfig({ ...SMOLLM2_135M, qkvBias: true })).toThrow('qkvBias must be false');
    expect(() => toHfConfig({ ...SMOLLM2_135M, family: 'gpt' })).toThrow("family must be 'llama'");
  });
});

describe('generation_config.json', () => {
  it('reads ids and sampling defaults (Qwen2.5-Instruct and SmolLM2 shapes)', () => {
    expect(
      readGenerationConfig({
        bos_token_id: 151643,
        pad_token_id: 151643,
        do_sample: true,
        eos_token_id: [151645, 151643],
        repetition_penalty: 1.1,
        temperature: 0.7,
        top_p: 0.8,
        top_k: 20,
        transformers_version: '4.37.0',
      }),
    ).toEqual({
      bos: 151643,
      pad: 151643,
      eos: [151645, 151643],
      doSample: true,
      repetitionPenalty: 1.1,
      temperature: 0.7,
      topP: 0.8,
      topK: 20,
    });
    expect(
      readGenerationConfig({ _from_model_config: true, bos_token_id: 1, eos_token_id: 2 }),
    ).toEqual({ bos: 1, eos: [2] });
    expect(readGenerationConfig({})).toEqual({ eos: [] });
  });

  it('refuses bad values naming the key', () => {
    expect(() => readGenerationConfig({ eos_token_id: [2, -1] })).toThrow(
      'generation_config.json: eos_token_id[1] must be a token id',
    );
    expect(() => readGenerationConfig({ top_p: 1.5 })).toThrow(
      'top_p must be a number in [0, 1], got 1.5',
    );
    expect(() => readGenerationConfig({ top_k: 2.5 })).toThrow('top_k must be an integer');
    expect(() => readGenerationConfig([])).toThrow('must be a JSON object');
  });
});
