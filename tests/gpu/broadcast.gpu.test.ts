/** Parity of kernels/broadcast_sum_tokens.wgsl and broadcast_tokens.wgsl with the CPU twins. */
import { describe, expect, it } from 'vitest';
import { broadcastToTokensGpu, sumOverTokensGpu } from '../../src/gpu/kernels/broadcast';
import { OpInputError } from '../../src/ops/errors';
import { broadcastToTokens, sumOverTokens } from '../../src/ops/broadcast';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('broadcast_sum_tokens / broadcast_tokens kernels vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1],
    [2, 3],
    [5, 257],
    [70, 1000],
  ])('match on %i × %i', async (rows, cols) => {
    const next = seededRandom(rows * cols);
    const tokens = randomLogits(rows * cols, 2, rows + cols);
    const mask = Float32Array.from(tokens, () => (next() < 0.5 ? 1 : 0));
    const sums = await sumOverTokensGpu(device, tokens, rows, cols);
    const expectedSums = sumOverTokens(tokens, rows, cols);
    for (let b = 0; b < rows; b++) {
      expect(Math.abs(sums[b]! - expectedSums[b]!)).toBeLessThan(1e-5 * (cols + 1));
    }
    const values = randomLogits(rows, 3, cols);
    const out = await broadcastToTokensGpu(device, values, mask, rows, cols);
    // A select on both paths: identical bits, no −0 at padding.
    expect(Array.from(out)).toEqual(Array.from(broadcastToTokens(values, mask, rows, cols)));
    expect(maxAbsDiff(out, broadcastToTokens(values, mask, rows, cols))).toBe(0);
  });

  it('rejects the same bad input as the CPU reference', async () => {
    const created = device.pool.stats().created;
    await expect(
      broadcastToTokensGpu(device, new Float32Array(3), new Float32Array(4), 2, 2),
    ).rejects.toThrow(/seqValues must have B = 2 elements, got 3/);
    expect(device.pool.stats().created).toBe(created);
    const tokens = new Float32Array([0, 1, NaN, 3]);
    expect(() => sumOverTokens(tokens, 2, 2)).toThrow(/tokens must be finite, but index 2/);
    await expect(sumOverTokensGpu(device, tokens, 2, 2)).rejects.toThrow(OpInputError);
    await expect(sumOverTokensGpu(device, tokens, 2, 2)).rejects.toThrow(
      /sumOverTokens: tokens must be finite, but index 2/,
    );
    await expect(
      broadcastToTokensGpu(device, new Float32Array([1, NaN]), new Float32Array(4), 2, 2),
    ).rejects.toThrow(/broadcastToTokens: seqValues must be finite, but index 1/);
    expect(device.pool.stats().inUse).toBe(0);
  });
});
