/** Parity of kernels/log_softmax.wgsl with its CPU twin; runs in Node (Dawn) and in Chromium. */
import { describe, expect, it } from 'vitest';
import { logSoftmaxGpu } from '../../src/gpu';
import { OpInputError, logSoftmax } from '../../src/ops';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('log_softmax kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1],
    [1, 3],
    [3, 255],
    [5, 256],
    [7, 257],
    [64, 1000],
    [2, 65536],
  ])('matches on %i × %i', async (rows, cols) => {
    const logits = randomLogits(rows * cols, 8, rows * 1000 + cols);
    const expected = logSoftmax(logits, rows, cols);
    const actual = await logSoftmaxGpu(device, logits, rows, cols);
    expect(maxAbsDiff(actual, expected)).toBeLessThan(2e-5);
  });

  it('matches on 12 random shapes (seeded)', async () => {
    const next = seededRandom(2024);
    for (let trial = 0; trial < 12; trial++) {
      const rows = 1 + Math.floor(next() * 40);
      const cols = 1 + Math.floor(next() * 3000);
      const logits = randomLogits(rows * cols, 1 + next() * 30, trial);
      const diff = maxAbsDiff(
        await logSoftmaxGpu(device, logits, rows, cols),
        logSoftmax(logits, rows, cols),
      );
      expect(diff, `${rows} × ${cols}`).toBeLessThan(5e-5);
    }
  });

  it('is accurate for logits of magnitude 1e4', async () => {
    const rows = 4;
    const cols = 4096;
    const logits = randomLogits(rows * cols, 1e4, 99);
    logits[17] = 1e4;
    logits[cols + 5] = -1e4;
    const expected = logSoftmax(logits, rows, cols);
    const actual = await logSoftmaxGpu(device, logits, rows, cols);
    // log-probs reach −2e4 here; f32 spacing at 2e4 is ~2e-3, so compare relative to magnitude.
    for (let i = 0; i < actual.length; i++) {
      expect(Math.abs(actual[i]! - expected[i]!)).toBeLessThanOrEqual(
        4e-3 + Math.abs(expected[i]!) * 2e-7,
      );
    }
  });

  it('gives identical results for every workgroup size', async () => {
    const logits = randomLogits(9 * 777, 6, 5);
    const reference = await logSoftmaxGpu(device, logits, 9, 777, { workgroupSize: 256 });
    for (const workgroupSize of [32, 64, 128] as const) {
      const out = await logSoftmaxGpu(device, logits, 9, 777, { workgroupSize });
      expect(maxAbsDiff(out, reference)).toBeLessThan(2e-6);
    }
  });

  it('covers more rows than one grid dimension holds (2D dispatch)', async () => {
    const rows = 70_000; // > 65,535 workgroups per dimension
    const cols = 3;
    const logits = randomLogits(rows * cols, 4, 3);
    const actual = await logSoftmaxGpu(device, logits, rows, cols, { workgroupSize: 64 });
    expect(maxAbsDiff(actual, logSoftmax(logits, rows, cols))).toBeLessThan(2e-6);
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(logSoftmaxGpu(device, new Float32Array([1, NaN]), 1, 2)).rejects.toThrow(
      OpInputError,
    );
    await expect(logSoftmaxGpu(device, new Float32Array(3), 2, 2)).rejects.toThrow(
      /2 × 2 = 4 elements, got 3/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
