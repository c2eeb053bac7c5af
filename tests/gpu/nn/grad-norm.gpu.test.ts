/**
 * Parity of kernels/nn/grad_norm_{partials,finish}.wgsl with gradNorm() / clipScale(); runs in
 * Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeGradNorm,
  gradNormGpu,
  gradNormPartialsLength,
} from '../../../src/gpu/kernels/nn/grad-norm';
import { OpInputError } from '../../../src/ops/errors';
import { clipScale, gradNorm } from '../../../src/ops/nn/grad-norm';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

/** Relative difference, for norms spanning many magnitudes. */
const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-30);

describe.skipIf(!gpu)('grad norm kernels vs CPU reference', () => {
  const device = gpu!;

  // f32 accumulation: each thread adds 32 squares, then two 64-wide trees, after stage 2's
  // threads each add ≤ 8 partials here. The relative error of Σ g² is ≲ (32 + 6 + 8 + 6)·2^-24
  // ≈ 3e-6 in the worst case; √ halves it.
  // 1e-5 relative leaves room for the 1e6-element case. clipScale inherits the same error.
  it.each([1, 63, 64, 255, 256, 2047, 2049, 10_000, 1_000_000])(
    'matches on %i elements, and advances the step',
    async (count) => {
      const grads = randomLogits(count, 2, count);
      const maxNorm = 0.5 * gradNorm(grads); // clipping active
      const stats = await gradNormGpu(device, grads, maxNorm, new Float32Array([0, 0, 0, 7]));
      const norm = gradNorm(grads);
      expect(rel(stats[0]!, norm)).toBeLessThan(1e-5);
      expect(rel(stats[1]!, clipScale(norm, maxNorm))).toBeLessThan(1e-5);
      expect(stats[2]).toBe(1);
      expect(stats[3]).toBe(8);
    },
  );

  it('gives the 3-4-12 triangle norm 13 and PyTorch clip coefficients', async () => {
    const grads = new Float32Array([3, 4, 12]);
    const clipped = await gradNormGpu(device, grads, 1);
    expect(clipped[0]).toBe(13);
    expect(clipped[1]).toBeCloseTo(1 / (13 + 1e-6), 7);
    // maxNorm ≥ norm: coefficient clamped to 1; maxNorm ≤ 0 or ∞: clipping off.
    for (const maxNorm of [20, 0, -1, Infinity]) {
      const stats = await gradNormGpu(device, grads, maxNorm);
      expect(Array.from(stats), `maxNorm ${maxNorm}`).toEqual([13, 1, 1, 1]);
    }
    // All-zero gradient: norm 0, coefficient 1 (1 / 1e-6 clamped).
    expect(Array.from(await gradNormGpu(device, new Float32Array(300), 1))).toEqual([0, 1, 1, 1]);
  });

  it('marks a non-finite gradient: applied 0, scale 0, step unchanged', async () => {
    const base = randomLogits(5000, 1, 3);
    const cases: [string, (g: Float32Array) => void, number][] = [
      ['NaN', (g) => (g[4321] = NaN), NaN],
      ['+Inf', (g) => (g[0] = Infinity), Infinity],
      ['−Inf', (g) => (g[4999] = -Infinity), Infinity],
      ['NaN and Inf', (g) => ((g[1] = Infinity), (g[2] = NaN)), NaN],
      // Finite values whose squares overflow f32 (the CPU twin, in float64, does not overflow).
      ['overflow of Σ g²', (g) => (g[10] = 3e19), Infinity],
    ];
    for (const [name, poison, expectedNorm] of cases) {
      const grads = base.slice();
      poison(grads);
      const stats = await gradNormGpu(device, grads, 1, new Float32Array([0, 0, 0, 41]));
      expect(stats[0], name).toBe(expectedNorm);
      expect(Array.from(stats.subarray(1)), name).toEqual([0, 0, 41]);
    }
  });

  it('is deterministic: the same bits on every run', async () => {
    const grads = randomLogits(123_457, 3, 9);
    const first = await gradNormGpu(device, grads, 10);
    for (let run = 0; run < 3; run++) {
      expect(Array.from(await gradNormGpu(device, grads, 10))).toEqual(Array.from(first));
    }
  });

  it('reads grads from a slice of a larger buffer and writes stats into a slice', async () => {
    // grads at byte offset 256·4 of a 3000-float buffer, stats at byte offset 256 of another.
    const all = randomLogits(3000, 1, 21);
    const offset = 256;
    const count = 1500;
    const flat = device.storage(all.byteLength, 'flat grads');
    const partials = device.storage(gradNormPartialsLength(count) * 4, 'partials');
    const statsBuffer = device.storage(512, 'stats');
    try {
      device.device.queue.writeBuffer(flat, 0, all.buffer, all.byteOffset, all.byteLength);
      const statsInit = new Float32Array(128).fill(-5);
      statsInit.set([0, 0, 0, 2], 64);
      device.device.queue.writeBuffer(statsBuffer, 0, statsInit);
      const batch = device.beginBatch('grad norm slices');
      await encodeGradNorm(
        device,
        batch,
        {
          grads: { buffer: flat, offset: offset * 4, size: count * 4 },
          partials,
          stats: { buffer: statsBuffer, offset: 256, size: 16 },
        },
        count,
        1,
      );
      batch.submit();
      const stats = await device.readF32(statsBuffer, 128);
      const norm = gradNorm(all.subarray(offset, offset + count));
      expect(rel(stats[64]!, norm)).toBeLessThan(1e-5);
      expect(rel(stats[65]!, clipScale(norm, 1))).toBeLessThan(1e-5);
      expect(Array.from(stats.subarray(66, 68))).toEqual([1, 3]);
      // Nothing outside the stats slice was written.
      expect(stats.subarray(0, 64).every((x) => x === -5)).toBe(true);
      expect(stats.subarray(68).every((x) => x === -5)).toBe(true);
    } finally {
      for (const b of [flat, partials, statsBuffer]) device.pool.release(b);
    }
  });

  it('rejects bad input before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(gradNormGpu(device, new Float32Array(4), NaN)).rejects.toThrow(/maxNorm/);
    await expect(gradNormGpu(device, new Float32Array(0), 1)).rejects.toThrow(OpInputError);
    await expect(gradNormGpu(device, new Float32Array(4), 1, new Float32Array(3))).rejects.toThrow(
      /stats must have 4 elements/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
