/**
 * sample_large's firstRow and drawRows: a batch that is part of a larger one (the Llama generator
 * runs the prompts of one length together, wherever they sit in the list) draws what those rows
 * draw in the whole batch. Node (Dawn) and Chromium.
 */
import { describe, expect, it } from 'vitest';
import { encodeSampleLarge, sampleLargeGpu } from '../../../src/gpu/kernels/nn/sample-large';
import { PooledBuffers } from '../../../src/gpu/kernels/run-convenience';
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

  it('rows 5, 0, 2 gathered, told their draw rows, pick the tokens of those rows of the whole batch', async () => {
    const V = 5000;
    const rows = 6;
    const logits = randomLogits(rows * V, 3, 12);
    const options = { temperature: 1.3, topK: 0, topP: 1 };
    const whole = await sampleLargeGpu(device, logits, rows, V, options, 22, 5);
    const picked = [5, 0, 2];
    const gathered = new Float32Array(picked.length * V);
    picked.forEach((r, i) => gathered.set(logits.subarray(r * V, (r + 1) * V), i * V));
    const pooled = new PooledBuffers(device);
    try {
      const buffers = {
        logits: pooled.upload(gathered, 'logits'),
        tokens: pooled.storage(picked.length, 'tokens'),
        logprobs: pooled.storage(picked.length, 'logprobs'),
      };
      const drawRows = pooled.upload(Uint32Array.from(picked), 'draw rows');
      const run = async (withRows: boolean) => {
        const batch = device.beginBatch('sample-large draw rows');
        const rowOptions = withRows ? { ...options, drawRows } : options;
        await encodeSampleLarge(device, batch, buffers, picked.length, V, rowOptions, 22, 5);
        batch.submit();
        return Array.from(new Int32Array(await device.read(buffers.tokens, picked.length * 4)));
      };
      expect(await run(true)).toEqual(picked.map((r) => whole.tokens[r]));
      // Drawn as rows 0, 1, 2 instead, they differ somewhere.
      expect(await run(false)).not.toEqual(picked.map((r) => whole.tokens[r]));
      const batch = device.beginBatch('refusal');
      await expect(
        encodeSampleLarge(
          device,
          batch,
          buffers,
          3,
          V,
          { ...options, drawRows, firstRow: 1 },
          0,
          0,
        ),
      ).rejects.toThrow(/drawRows is given with firstRow/);
      batch.submit();
    } finally {
      pooled.release();
    }
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
