import { describe, expect, it } from 'vitest';
import {
  checkModelSpec,
  fromTransformerConfig,
  parameterCount,
  readModelSpec,
  toTransformerConfig,
  writeModelSpec,
  type ModelSpec,
} from '../../src/models/model-spec';
import { transformerLayout } from '../../src/models/transformer-params';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { SMOLLM2_135M, QWEN25_05B, QWEN3_06B } from '../support/published-specs';

const TINY: TransformerConfig = {
  vocab: 79,
  context: 40,
  width: 64,
  layers: 2,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: false,
};

describe('ModelSpec', () => {
  it('counts the published parameter totals of SmolLM2-135M, Qwen2.5-0.5B and Qwen3-0.6B', () => {
    // The totals their model cards and safetensors indexes state (tied embeddings counted once).
    expect(parameterCount(SMOLLM2_135M)).toBe(134_515_008);
    expect(parameterCount(QWEN25_05B)).toBe(494_032_768);
    expect(parameterCount(QWEN3_06B)).toBe(596_049_920);
  });

  it.each([
    ['learned, tied', TINY],
    [
      'rotary, untied, value head',
      { ...TINY, positions: 'rotary', tiedEmbeddings: false, valueHead: true },
    ],
  ] as [string, TransformerConfig][])(
    'maps the tiny GPT (%s) to a gpt spec and back, with the layout’s parameter count',
    (_, config) => {
      const spec = fromTransformerConfig(config);
      expect(spec.family).toBe('gpt');
      const back = toTransformerConfig(spec);
      expect(back).toEqual(
        config.positions === 'rotary' ? { ...config, rotaryBase: 10_000 } : config,
      );
      const layoutCount = transformerLayout(config).entries.reduce((n, e) => n + e.size, 0);
      expect(parameterCount(spec)).toBe(layoutCount);
    },
  );

  it('writes and reads every family back unchanged', () => {
    for (const spec of [fromTransformerConfig(TINY), SMOLLM2_135M, QWEN25_05B, QWEN3_06B]) {
      const json = JSON.parse(JSON.stringify(writeModelSpec(spec)));
      expect(readModelSpec(json)).toEqual(spec);
    }
  });

  it.each([
    [{ kvHeads: 4 }, 'kvHeads must divide heads (9)'],
    [{ headDim: 63 }, 'headDim must be even for rotary positions'],
    [{ family: 'gpt-neox' }, "family must be one of 'gpt', 'llama', 'qwen2', 'qwen3'"],
    [{ width: 0 }, 'width must be an integer in [8, 16384], got 0'],
    [{ normEps: 0 }, 'normEps must be in [1e-12, 0.01], got 0'],
    [{ qkNorm: true, norm: 'layernorm' }, "qkNorm needs norm 'rmsnorm'"],
    [{ tiedEmbeddings: 1 }, 'tiedEmbeddings must be one of true, false, got 1'],
  ] as [Partial<Record<keyof ModelSpec, unknown>>, string][])(
    'refuses %o naming the field and its range',
    (change, message) => {
      expect(() => checkModelSpec({ ...SMOLLM2_135M, ...change } as ModelSpec)).toThrow(message);
    },
  );

  it('refuses untrusted JSON with a missing, unknown or huge field, quoting at most 40 characters', () => {
    const json = writeModelSpec(SMOLLM2_135M);
    const missing = { ...json };
    delete missing.vocab;
    expect(() => readModelSpec(missing)).toThrow('ModelSpec: vocab is missing');
    expect(() => readModelSpec({ ...json, extra: 1 })).toThrow('"extra" is not a field');
    const huge = 'x'.repeat(5_000_000);
    const error = (() => {
      try {
        readModelSpec({ ...json, family: huge });
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error?.message).toMatch(/^ModelSpec: family must be a short choice/);
    expect(error!.message.length).toBeLessThan(120);
    expect(() => readModelSpec([])).toThrow('must be an object');
  });

  it('refuses to run a spec the tiny GPT cannot as a gpt, naming the field', () => {
    expect(() => toTransformerConfig(SMOLLM2_135M)).toThrow("family must be 'gpt'");
    const gpt = fromTransformerConfig(TINY);
    expect(() => toTransformerConfig({ ...gpt, mlp: 'swiglu' })).toThrow('mlp must be "gelu"');
    expect(() => toTransformerConfig({ ...gpt, kvHeads: 2 })).toThrow('kvHeads must be 4');
  });
});
