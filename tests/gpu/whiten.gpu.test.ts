/** Parity of kernels/whiten_stats.wgsl + whiten_apply.wgsl with the CPU twin; Node and Chromium. */
import { describe, expect, it } from 'vitest';
import { whitenGpu } from '../../src/gpu/kernels/whiten';
import { OpInputError } from '../../src/ops/errors';
import { type WhitenOptions, whiten } from '../../src/ops/whiten';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

function randomMask(n: number, seed: number, p: number): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: n }, () => (next() < p ? 1 : 0));
}

const FLAVORS: WhitenOptions[] = [
  { flavor: 'verl' },
  { flavor: 'openrlhf' },
  { flavor: 'trl', shiftMean: false },
];

describe.skipIf(!gpu)('whiten kernels vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 2],
    [1, 5],
    [3, 255],
    [8, 513],
    [16, 4096], // 16 chunks
  ])('matches on %i × %i for each flavor', async (rows, cols) => {
    const x = randomLogits(rows * cols, 3, rows + cols);
    const mask = randomMask(rows * cols, cols, 0.7);
    mask[0] = 1;
    mask[1] = 1;
    for (const options of FLAVORS) {
      const expected = whiten(x, mask, rows, cols, options);
      const actual = await whitenGpu(device, x, mask, rows, cols, options);
      expect(maxAbsDiff(actual.output, expected.output), JSON.stringify(options)).toBeLessThan(
        5e-5,
      );
      expect(actual.stats.count).toBe(expected.stats.count);
      expect(actual.stats.mean).toBeCloseTo(expected.stats.mean, 5);
      expect(actual.stats.variance).toBeCloseTo(expected.stats.variance, 4);
      expect(actual.stats.emptyMask).toBe(false);
    }
  });

  it('merges more chunks than one workgroup holds (1.1M elements, offset data)', async () => {
    const rows = 270; // 270 chunks of 4096 > 256 threads in the merge
    const cols = 4096;
    const x = randomLogits(rows * cols, 2, 8).map((v) => v + 50);
    const mask = randomMask(rows * cols, 9, 0.9);
    const expected = whiten(x, mask, rows, cols);
    const actual = await whitenGpu(device, x, mask, rows, cols);
    expect(maxAbsDiff(actual.output, expected.output)).toBeLessThan(2e-4);
    expect(actual.stats.count).toBe(expected.stats.count);
    expect(actual.stats.variance).toBeCloseTo(expected.stats.variance, 3);
  });

  it('matches on 8 random shapes and masks (seeded)', async () => {
    const next = seededRandom(31);
    for (let trial = 0; trial < 8; trial++) {
      const rows = 1 + Math.floor(next() * 30);
      const cols = 1 + Math.floor(next() * 2000);
      const x = randomLogits(rows * cols, 1 + next() * 10, trial);
      const mask = randomMask(rows * cols, trial + 100, next());
      const options = FLAVORS[trial % FLAVORS.length]!;
      const expected = whiten(x, mask, rows, cols, options);
      const actual = await whitenGpu(device, x, mask, rows, cols, options);
      const scale = 1 + Math.abs(expected.stats.mean);
      expect(maxAbsDiff(actual.output, expected.output), `${rows}×${cols}`).toBeLessThan(
        1e-4 * scale,
      );
      expect(actual.stats.count).toBe(expected.stats.count);
    }
  });

  it('gives the CPU results exactly for degenerate masks and constant inputs', async () => {
    const x = new Float32Array([0.1, 0.1, 0.1, 7, 0.1, 0.1]);
    const cases: [Float32Array, WhitenOptions][] = [
      [new Float32Array(6), {}], // empty mask
      [new Float32Array([0, 0, 0, 1, 0, 0]), {}], // one element, unbiased
      [new Float32Array([0, 0, 0, 1, 0, 0]), { shiftMean: false }],
      [new Float32Array([1, 1, 1, 0, 1, 1]), {}], // constant 0.1 (not representable)
      [new Float32Array([1, 1, 1, 0, 1, 1]), { flavor: 'openrlhf' }],
    ];
    for (const [mask, options] of cases) {
      const expected = whiten(x, mask, 2, 3, options);
      const actual = await whitenGpu(device, x, mask, 2, 3, options);
      expect(Array.from(actual.output)).toEqual(Array.from(expected.output));
      expect(actual.stats).toEqual(expected.stats);
    }
  });

  it('rejects the same bad input as the CPU reference', async () => {
    const mask = new Float32Array([1, 1, 1, 1]);
    const created = device.pool.stats().created;
    await expect(
      whitenGpu(device, new Float32Array(4), new Float32Array([1, 2, 0, 0]), 2, 2),
    ).rejects.toThrow(/mask must be 0 or 1, but index 1/);
    await expect(whitenGpu(device, new Float32Array(3), mask, 2, 2)).rejects.toThrow(
      /x must have rows × cols = 2 × 2 = 4 elements, got 3/,
    );
    expect(device.pool.stats().created).toBe(created);
    const bad = new Float32Array([0, 1, 2, NaN]);
    expect(() => whiten(bad, mask, 2, 2)).toThrow(/whiten: x must be finite, but index 3/);
    await expect(whitenGpu(device, bad, mask, 2, 2)).rejects.toThrow(OpInputError);
    await expect(whitenGpu(device, bad, mask, 2, 2)).rejects.toThrow(
      /whiten: x must be finite, but index 3/,
    );
    expect(device.pool.stats().inUse).toBe(0);
  });
});
