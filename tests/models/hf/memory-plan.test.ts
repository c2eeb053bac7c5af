import { describe, expect, it } from 'vitest';
import {
  formatBytes,
  forwardActivationBytes,
  planMemory,
  WEBGPU_DEFAULT_LIMITS,
  type MemoryRequest,
} from '../../../src/models/hf/memory-plan';
import type { ModelSpec } from '../../../src/models/model-spec';
import { SMOLLM2_135M, QWEN25_05B, QWEN3_06B } from '../../support/published-specs';

const request = (change: Partial<MemoryRequest> = {}): MemoryRequest => ({
  storage: 'f16',
  batch: 1,
  context: 8_192,
  limits: WEBGPU_DEFAULT_LIMITS,
  ...change,
});

describe('memory plan', () => {
  it('SmolLM2-135M in f16: 269 MB of weights in two default-size buffers, no split', () => {
    const plan = planMemory(SMOLLM2_135M, request());
    expect(plan.parameterBytes).toBe(134_515_008 * 2); // 269,030,016
    // Every matrix is a multiple of 256 bytes; each [576] norm gain (1,152 bytes) pads 128 bytes:
    // 2 per layer × 30 layers + the final norm.
    expect(plan.weightBytes).toBe(269_030_016 + 128 * 61);
    expect(plan.weightBuffers).toBe(2); // 269.04 MB > 268,435,456
    expect(plan.splits).toEqual([]);
    // K and V: 30 layers × 8,192 positions × 3 heads × 64 × 4 bytes.
    expect(plan.kvLayerBytes).toBe(8_192 * 3 * 64 * 4);
    expect(plan.kvCacheBytes).toBe(2 * 30 * 6_291_456); // 377,487,360
    expect(plan.totalBytes).toBe(plan.weightBytes + plan.kvCacheBytes + plan.activationBytes);
    expect(formatBytes(plan.parameterBytes)).toBe('269 MB');
  });

  it("splits Qwen2.5-0.5B's 151,936 × 896 embedding by rows to fit a 128 MiB binding", () => {
    const f32 = planMemory(QWEN25_05B, request({ storage: 'f32' }));
    // 151,936 × 896 × 4 = 544,538,624 bytes; a row is 3,584 bytes, 37,449 rows fit 134,217,728.
    expect(f32.splits).toEqual([
      { name: 'model.embed_tokens.weight', bytes: 544_538_624, parts: 5, rowsPerPart: 37_449 },
    ]);
    expect(formatBytes(544_538_624)).toBe('545 MB');
    const f16 = planMemory(QWEN25_05B, request({ storage: 'f16' }));
    expect(f16.splits).toEqual([
      { name: 'model.embed_tokens.weight', bytes: 272_269_312, parts: 3, rowsPerPart: 74_898 },
    ]);
    expect(f16.parameterBytes).toBe(494_032_768 * 2);
    // With an adapter's larger limits (asked for at device creation), nothing is split.
    const big = { maxBufferSize: 4 * 2 ** 30, maxStorageBufferBindingSize: 2 ** 31 - 4 };
    expect(planMemory(QWEN25_05B, request({ storage: 'f32', limits: big })).splits).toEqual([]);
  });

  it('Qwen3-0.6B untied would split its lm_head too; its f16 weights are 1.19 GB', () => {
    const plan = planMemory({ ...QWEN3_06B, tiedEmbeddings: false }, request({ storage: 'f16' }));
    // 151,936 × 1,024 × 2 = 311,164,928 bytes; a row is 2,048 bytes: 65,536 rows per part.
    expect(plan.splits.map((s) => [s.name, s.parts, s.rowsPerPart])).toEqual([
      ['model.embed_tokens.weight', 3, 65_536],
      ['lm_head.weight', 3, 65_536],
    ]);
    expect(formatBytes(planMemory(QWEN3_06B, request()).parameterBytes)).toBe('1.19 GB');
  });

  it('keeps each f16 part a whole number of 4-byte words when a row is an odd number of halves', () => {
    // Rows of 577 halves are 1,154 bytes; 3 rows fit 3,500 bytes, but 3 × 1,154 is not a multiple
    // of 4, so parts hold 2 rows: 10 rows in 5 parts.
    const odd: ModelSpec = {
      ...SMOLLM2_135M,
      vocab: 10,
      width: 577,
      heads: 1,
      kvHeads: 1,
      headDim: 2,
      mlpWidth: 2,
      layers: 1,
      context: 16,
    };
    const limits = { maxBufferSize: 1 << 20, maxStorageBufferBindingSize: 3_500 };
    const plan = planMemory(odd, request({ context: 1, limits }));
    expect(plan.splits.find((s) => s.name === 'model.embed_tokens.weight')).toEqual({
      name: 'model.embed_tokens.weight',
      bytes: 11_540,
      parts: 5,
      rowsPerPart: 2,
    });
    expect(
      planMemory(odd, request({ storage: 'f32', context: 1, limits })).splits[0],
    ).toMatchObject({ rowsPerPart: 1, parts: 10 });
  });

  it('counts activations of a forward pass (hand count for one decode step of SmolLM2)', () => {
    // N = 1: residual and normed 2·576, q 576, k and v 2·192, scores 9·8,192, attention output
    // 576, gate and up 2·1,536, logits 49,152, log-prob 1 — floats × 4 bytes.
    const floats = 1_152 + 576 + 384 + 73_728 + 576 + 3_072 + 49_152 + 1;
    expect(forwardActivationBytes(SMOLLM2_135M, 1, 1, 8_192)).toBe(4 * floats);
  });

  it('refuses a model over the budget with the numbers', () => {
    // KV: 2 × 24 layers × 4,096 × 2 heads × 64 × 4 bytes = 100,663,296.
    expect(() => planMemory(QWEN25_05B, request({ context: 4_096, budgetBytes: 1e9 }))).toThrow(
      /^the model needs \d\.\d\d GB \(weights 988 MB as f16, KV cache 101 MB for batch 1 × context 4096, activations .+\), more than the 1\.00 GB available$/,
    );
  });

  it('refuses a KV cache layer or a tensor row larger than a binding', () => {
    // 64 × 32,768 × 2 × 64 × 4 = 1,073,741,824 bytes per layer.
    expect(() => planMemory(QWEN25_05B, request({ batch: 64, context: 32_768 }))).toThrow(
      "one layer's K cache for batch 64 × context 32768 is 1.07 GB, more than the 134 MB a binding may hold",
    );
    const tiny = { maxBufferSize: 1024, maxStorageBufferBindingSize: 1024 };
    expect(() => planMemory(SMOLLM2_135M, request({ context: 1, limits: tiny }))).toThrow(
      'one row of model.embed_tokens.weight is 1.2 kB, more than the 1.0 kB a binding may hold',
    );
    expect(() => planMemory(SMOLLM2_135M, request({ context: 10_000 }))).toThrow(
      'context must be an integer in [1, 8192], got 10000',
    );
  });
});
