import { describe, expect, it } from 'vitest';
import { fromHfConfig } from '../../src/models/hf/hf-config';
import { WEBGPU_DEFAULT_LIMITS } from '../../src/models/hf/memory-plan';
import {
  architectureRows,
  chatContext,
  checkFit,
  CPU_MAX_PARAMETERS,
  formatCount,
} from '../../src/state/model-fit';
import { readFileSync } from 'node:fs';

// SmolLM2-135M's and Qwen2.5-0.5B's published config.json fields (the shapes only).
const smolLm2 = fromHfConfig({
  model_type: 'llama',
  hidden_size: 576,
  intermediate_size: 1536,
  num_hidden_layers: 30,
  num_attention_heads: 9,
  num_key_value_heads: 3,
  vocab_size: 49152,
  max_position_embeddings: 8192,
  rms_norm_eps: 1e-5,
  rope_theta: 100000,
  tie_word_embeddings: true,
});
const qwen25 = fromHfConfig({
  model_type: 'qwen2',
  hidden_size: 896,
  intermediate_size: 4864,
  num_hidden_layers: 24,
  num_attention_heads: 14,
  num_key_value_heads: 2,
  vocab_size: 151936,
  max_position_embeddings: 32768,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000,
  tie_word_embeddings: true,
});
const tiny = fromHfConfig(
  JSON.parse(readFileSync('tests/fixtures/hf/llama-tiny/config.json', 'utf8')) as unknown,
);

describe('model fit', () => {
  it('shows the architecture and the published parameter count', () => {
    const rows = new Map(architectureRows(smolLm2));
    expect(rows.get('Family')).toBe('llama');
    expect(rows.get('Layers')).toBe('30');
    expect(rows.get('Heads / KV heads')).toBe('9 / 3');
    expect(rows.get('Head size')).toBe('64');
    expect(rows.get('Vocabulary')).toBe('49,152');
    expect(rows.get('Context')).toBe('8,192');
    // SmolLM2-135M: 134,515,008 parameters as its model card's checkpoint holds them.
    expect(rows.get('Parameters')).toBe('134.5M (134,515,008)');
  });

  it('caps the chat context at 2048 and keeps a smaller model context', () => {
    expect(chatContext(smolLm2)).toBe(2048);
    expect(chatContext(tiny)).toBe(256);
  });

  it('refuses a model over the CPU bound with the numbers and the reason', () => {
    const fit = checkFit({ spec: smolLm2, backend: 'cpu' });
    expect(fit.ok).toBe(false);
    expect(fit.reason).toContain('up to 50.0M parameters; this one has 134.5M');
    // 134,515,008 × 4 bytes = 538 MB of f32 weights.
    expect(fit.reason).toContain('538 MB');
  });

  it('takes the tiny fixture on the CPU', () => {
    const fit = checkFit({ spec: tiny, backend: 'cpu' });
    expect(fit.ok).toBe(true);
    expect(fit.reason).toMatch(/^Loads on the CPU as f32/);
    expect(CPU_MAX_PARAMETERS).toBe(50_000_000);
  });

  it('plans SmolLM2 on the GPU as f16 with a KV cache for 2048 positions', () => {
    const fit = checkFit({ spec: smolLm2, backend: 'webgpu', limits: WEBGPU_DEFAULT_LIMITS });
    expect(fit.ok).toBe(true);
    const f16 = fit.plans.find((p) => p.storage === 'f16')!.plan!;
    const f32 = fit.plans.find((p) => p.storage === 'f32')!.plan!;
    // K and V, 30 layers, 2048 positions, 3 KV heads × 64, f32: 2·30·2048·192·4 = 94,371,840.
    expect(f16.kvCacheBytes).toBe(94_371_840);
    expect(f16.parameterBytes).toBe(134_515_008 * 2);
    expect(f32.parameterBytes).toBe(134_515_008 * 4);
    expect(fit.reason).toContain('KV cache 94.4 MB for 2048 positions');
  });

  it('splits a tensor over the binding size into parts, and says so with the sizes', () => {
    const fit = checkFit({ spec: qwen25, backend: 'webgpu', limits: WEBGPU_DEFAULT_LIMITS });
    expect(fit.ok).toBe(true);
    // 151,936 × 896 halves = 272,269,312 bytes against the default 134,217,728-byte binding:
    // rows of 1,792 bytes, 74,898 to a part, so 3 parts (74,898 + 74,898 + 2,140 rows).
    expect(fit.reason).toContain(
      'model.embed_tokens.weight (272 MB) is held in 3 parts of up to 74,898 rows, each within the 134 MB one GPU buffer binding may hold on this device.',
    );
  });

  it('refuses a model whose single row is over the binding, naming the tensor and both sizes', () => {
    const limits = { maxBufferSize: 1024, maxStorageBufferBindingSize: 1024 };
    const fit = checkFit({ spec: qwen25, backend: 'webgpu', limits });
    expect(fit.ok).toBe(false);
    expect(fit.reason).toMatch(
      /^Refused: memory plan: one row of model\.embed_tokens\.weight is 1\.8 kB, more than the 1\.0 kB a binding may hold/,
    );
  });

  it('accepts that model where the device offers larger bindings', () => {
    const limits = { maxBufferSize: 2 ** 31, maxStorageBufferBindingSize: 2 ** 31 };
    expect(checkFit({ spec: qwen25, backend: 'webgpu', limits }).ok).toBe(true);
  });

  it('writes counts briefly', () => {
    expect(formatCount(999)).toBe('999');
    expect(formatCount(52_000)).toBe('52.0k');
    expect(formatCount(494_032_768)).toBe('494.0M');
    expect(formatCount(1_540_000_000)).toBe('1.54B');
  });
});
