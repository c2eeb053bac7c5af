/**
 * The seeded random weights of the real-shape benches: every tensor of the spec at its shape, the
 * same values whether made alone or with the rest, at Hugging Face's initializer scale.
 */
import { describe, expect, it } from 'vitest';
import { llamaModelFromWeights } from '../../src/models/hf/llama-cpu-weights';
import { randomLlamaWeights, randomLlamaWeightSource } from '../../bench/onnx/random-llama-weights';
import { QWEN25_05B } from '../support/published-specs';

/** Qwen2.5-0.5B's kinds of tensor (biases on q/k/v) at a small size. */
const SPEC = {
  ...QWEN25_05B,
  vocab: 300,
  width: 64,
  heads: 4,
  kvHeads: 2,
  headDim: 16,
  mlpWidth: 96,
  layers: 2,
};

describe('random Llama weights', () => {
  it('gives every tensor of the spec, and the CPU model accepts them', () => {
    const weights = randomLlamaWeights(SPEC, 5);
    const model = llamaModelFromWeights(SPEC, weights);
    expect(model.layers[1]!.qBias!.length).toBe(64);
    expect(model.lmHead).toBe(model.embed); // tied
  });

  it('makes a tensor alone exactly as in the full map, and another seed differently', () => {
    const all = randomLlamaWeights(SPEC, 5);
    const name = 'model.layers.1.mlp.down_proj.weight';
    expect(randomLlamaWeightSource(SPEC, 5)(name)).toEqual(all.get(name));
    const other = randomLlamaWeightSource(SPEC, 6)(name);
    expect(other[0]).not.toBe(all.get(name)![0]);
    // Two tensors of the same shape get different streams.
    expect(all.get('model.layers.0.mlp.down_proj.weight')![0]).not.toBe(all.get(name)![0]);
  });

  it('draws weights with std 0.02, biases within ±0.02, norm gains within 1 ± 0.1', () => {
    const source = randomLlamaWeightSource(SPEC, 5);
    const w = source('model.embed_tokens.weight');
    const mean = w.reduce((s, v) => s + v, 0) / w.length;
    const std = Math.sqrt(w.reduce((s, v) => s + (v - mean) ** 2, 0) / w.length);
    expect(std).toBeGreaterThan(0.019);
    expect(std).toBeLessThan(0.021);
    expect(Math.abs(mean)).toBeLessThan(1e-3);
    const bias = source('model.layers.0.self_attn.k_proj.bias');
    expect(Math.max(...bias.map(Math.abs))).toBeLessThanOrEqual(0.02);
    const gain = source('model.layers.0.input_layernorm.weight');
    expect(Math.min(...gain)).toBeGreaterThanOrEqual(0.9);
    expect(Math.max(...gain)).toBeLessThanOrEqual(1.1);
    expect(new Set(gain).size).toBeGreaterThan(60);
    expect(() => source('lm_head.weight')).toThrow(/not a tensor of this spec/);
  });
});
