/**
 * sample_large's firstRow: a batch that is part of a larger one (the Llama generator runs prompts
 * of one length together) draws what those rows draw in the whole batch. Node (Dawn) and Chromium.
 */
import { describe, expect, it } from 'vitest';
import { sampleLargeGpu } from '../../../src/gpu/kernels/nn/sample-large';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('sample_large firstRow', () => {
  const device = gpu!;

  it('rows 3…5 sampled alone with firstRow 3 pick the tokens of rows 3…5 of the whole batch', async () => {
    const V = 5000;
    const rows = 6;
    const logits = randomLogits(rows * V, 3, 11);
    const options = { temperature: 1.3, topK: 0, topP: 1 };
    const whole = await sampleLargeGpu(device, logits, rows, V, options, 21, 4);
    const part = await sampleLargeGpu(
      device,
      logits.slice(3 * V),
      3,
      V,
      { ...options, firstRow: 3 },
      21,
      4,
    );
    expect(Array.from(part.tokens)).toEqual(Array.from(whole.tokens.slice(3)));
    // Without the offset the draws differ somewhere (uniform logits make each draw spread wide).
    const unshifted = await sampleLargeGpu(device, logits.slice(3 * V), 3, V, options, 21, 4);
    expect(Array.from(unshifted.tokens)).not.toEqual(Array.from(whole.tokens.slice(3)));
  });

  it('refuses a negative or fractional firstRow, naming it', async () => {
    const logits = randomLogits(10, 1, 1);
    await expect(sampleLargeGpu(device, logits, 1, 10, { firstRow: -1 }, 0, 0)).rejects.toThrow(
      /firstRow/,
    );
    await expect(sampleLargeGpu(device, logits, 1, 10, { firstRow: 0.5 }, 0, 0)).rejects.toThrow(
      /firstRow/,
    );
  });
});
