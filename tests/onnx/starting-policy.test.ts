/** Starting a run from saved weights: our checkpoint or our ONNX export, checked and adapted. */
import { describe, expect, it } from 'vitest';
import { saveLanguageModel } from '../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { CHECKSUM_KEY } from '../../src/onnx/integrity';
import { OnnxError } from '../../src/onnx/onnx-error';
import { decodeModel, encodeModel } from '../../src/onnx/onnx-proto';
import { readStartingPolicy, withValueHead } from '../../src/onnx/starting-policy';
import { randomParams } from './helpers';

const tokenizer = CharTokenizer.createDefault();
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: 16,
  width: 32,
  layers: 1,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: false,
};
const params = randomParams(transformerLayout(config), 7);
const needs = { tokenizer: tokenizer.spec, tokensNeeded: 16, valueHead: false, seed: 3 };
const onnx = exportTransformerOnnx(config, params, tokenizer.spec);

function errorOf(run: () => unknown): OnnxError {
  try {
    run();
  } catch (error) {
    if (error instanceof OnnxError) return error;
    throw error;
  }
  throw new Error('expected an OnnxError');
}

describe('readStartingPolicy', () => {
  it('reads the same weights from an ONNX export and from a checkpoint', async () => {
    const fromOnnx = readStartingPolicy(onnx, needs);
    expect(fromOnnx.source).toBe('onnx');
    expect(fromOnnx.config).toEqual(config);
    expect(fromOnnx.params).toEqual(params);
    const model = new CpuLanguageModel(config, params);
    const checkpoint = await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 1 });
    const fromCheckpoint = readStartingPolicy(checkpoint, needs);
    expect(fromCheckpoint.source).toBe('checkpoint');
    expect(fromCheckpoint.params).toEqual(params);
  });

  it('notes an ONNX file whose weights could not be checked (no checksum); a checked one has none', () => {
    expect(readStartingPolicy(onnx, needs).note).toBeUndefined();
    const model = decodeModel(onnx);
    model.metadataProps = model.metadataProps.filter((e) => e.key !== CHECKSUM_KEY);
    model.producerVersion = '1'; // as the lab exported before checksums
    const started = readStartingPolicy(encodeModel(model), needs);
    expect(started.params).toEqual(readStartingPolicy(onnx, needs).params);
    expect(started.note).toMatch(/^This ONNX file has no checksum/);
  });

  it('adds a fresh value head for PPO, every other weight copied by name', () => {
    const started = readStartingPolicy(onnx, { ...needs, valueHead: true });
    expect(started.config).toEqual({ ...config, valueHead: true });
    const before = transformerLayout(config);
    const after = transformerLayout(started.config);
    expect(started.params).toHaveLength(after.total);
    for (const entry of before.entries) {
      expect(after.view(started.params, entry.name)).toEqual(before.view(params, entry.name));
    }
    // The head is initialized as a new model's would be from the run's seed: the same bytes.
    const fresh = after.initialize<Float32Array>(needs.seed);
    expect(after.view(started.params, 'value_head.w')).toEqual(after.view(fresh, 'value_head.w'));
    expect(after.view(started.params, 'value_head.w').some((w) => w !== 0)).toBe(true);
    expect(Array.from(after.view(started.params, 'value_head.b'))).toEqual([0]);
  });

  it('drops a value head the algorithm does not train (GRPO, DPO), and round-trips', () => {
    const withHead = withValueHead(config, params, true, 1);
    const back = withValueHead(withHead.config, withHead.params, false, 2);
    expect(back.config).toEqual(config);
    expect(back.params).toEqual(params);
    // Unchanged when the head already matches: the same arrays, no copy.
    expect(withValueHead(config, params, false, 1).params).toBe(params);
  });

  it('refuses a model with another tokenizer, naming both alphabets', () => {
    const other = { ...tokenizer.spec, chars: tokenizer.spec.chars.split('').reverse().join('') };
    const error = errorOf(() => readStartingPolicy(onnx, { ...needs, tokenizer: other }));
    expect(error.field).toBe('tokenizer');
    expect(error.message).toContain(JSON.stringify(other.chars));
  });

  it("refuses a task longer than the model's context, with both lengths", () => {
    const error = errorOf(() => readStartingPolicy(onnx, { ...needs, tokensNeeded: 17 }));
    expect(error.field).toBe('context');
    expect(error.message).toMatch(/is 16 tokens, but the task needs up to 17/);
  });

  it('refuses a truncated ONNX file and bytes that are neither format', () => {
    expect(errorOf(() => readStartingPolicy(onnx.subarray(0, 200), needs)).reason).toBe(
      'truncated',
    );
    const text = new TextEncoder().encode('not a model at all');
    expect(() => readStartingPolicy(text, needs)).toThrow(OnnxError);
  });
});
