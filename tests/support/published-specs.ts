/**
 * The architectures of the models the lab is built to bring, as their published config.json files
 * state them (Hugging Face: SmolLM2-135M-Instruct, Qwen2.5-0.5B-Instruct, Qwen3-0.6B), in the
 * lab's ModelSpec. Written out by hand from those files, not derived by the code under test.
 */
import type { ModelSpec } from '../../src/models/model-spec';

export const SMOLLM2_135M: ModelSpec = {
  family: 'llama',
  vocab: 49_152,
  context: 8_192,
  width: 576,
  layers: 30,
  heads: 9,
  kvHeads: 3,
  headDim: 64,
  mlpWidth: 1_536,
  mlp: 'swiglu',
  norm: 'rmsnorm',
  normEps: 1e-5,
  positions: 'rotary',
  rotaryBase: 100_000,
  qkvBias: false,
  outBias: false,
  mlpBias: false,
  qkNorm: false,
  tiedEmbeddings: true,
  valueHead: false,
};

export const QWEN25_05B: ModelSpec = {
  ...SMOLLM2_135M,
  family: 'qwen2',
  vocab: 151_936,
  context: 32_768,
  width: 896,
  layers: 24,
  heads: 14,
  kvHeads: 2,
  headDim: 64,
  mlpWidth: 4_864,
  normEps: 1e-6,
  rotaryBase: 1_000_000,
  qkvBias: true,
};

export const QWEN3_06B: ModelSpec = {
  ...QWEN25_05B,
  family: 'qwen3',
  context: 40_960,
  width: 1_024,
  layers: 28,
  heads: 16,
  kvHeads: 8,
  headDim: 128,
  mlpWidth: 3_072,
  qkvBias: false,
  qkNorm: true,
};
