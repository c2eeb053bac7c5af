/**
 * Tiny Llama-family specs for gradient checks: between them every optional tensor is on (biases
 * everywhere in 'llama', q/k/v biases in 'qwen2', the per-head q/k norm in 'qwen3'), tied and
 * untied embeddings both occur, and head_dim differs from width / heads in 'qwen3'.
 */
import type { ModelSpec } from '../../src/models/model-spec';

export function tinyLlamaSpec(family: 'llama' | 'qwen2' | 'qwen3'): ModelSpec {
  return {
    family,
    vocab: 11,
    context: 8,
    width: 8,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    headDim: family === 'qwen3' ? 4 : 2,
    mlpWidth: 6,
    mlp: 'swiglu',
    norm: 'rmsnorm',
    normEps: 1e-6,
    positions: 'rotary',
    rotaryBase: 10_000,
    qkvBias: family !== 'qwen3',
    outBias: family === 'llama',
    mlpBias: family === 'llama',
    qkNorm: family === 'qwen3',
    tiedEmbeddings: family !== 'llama',
    valueHead: false,
  };
}
