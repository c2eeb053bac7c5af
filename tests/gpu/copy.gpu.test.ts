/** Parity of kernels/copy.wgsl with its CPU twin; runs in Node (Dawn) and in Chromium. */
import { describe, expect, it } from 'vitest';
import { copyByteLength, copyGpu, encodeCopy } from '../../src/gpu/kernels/copy';
import { OpInputError } from '../../src/ops/errors';
import { copy } from '../../src/ops/copy';
import { testGpu } from '../support/gpu';
import { randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

function bits(x: Float32Array): number[] {
  return Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));
}

describe.skipIf(!gpu)('copy kernel vs CPU reference', () => {
  const device = gpu!;

  // Lengths around the vec4 and workgroup edges: 4·256 = 1024 elements per workgroup.
  it.each([1, 2, 3, 4, 5, 255, 1023, 1024, 1025, 4099])('matches on %i elements', async (n) => {
    const x = randomLogits(n, 100, n);
    expect(bits(await copyGpu(device, x))).toEqual(bits(copy(x)));
  });

  it('keeps special values: −0, NaN, ±Inf, the largest and smallest floats', async () => {
    const x = new Float32Array([-0, NaN, Infinity, -Infinity, 3.4028234e38, 1e-45, -1e-45]);
    const y = await copyGpu(device, x);
    expect(Object.is(y[0], -0)).toBe(true);
    expect(Number.isNaN(y[1])).toBe(true);
    expect(Array.from(y.subarray(2))).toEqual(Array.from(x.subarray(2)));
  });

  it('matches on 8 random lengths and every workgroup size (seeded)', async () => {
    const next = seededRandom(77);
    for (let trial = 0; trial < 8; trial++) {
      const n = 1 + Math.floor(next() * 200_000);
      const x = randomLogits(n, 1e3, trial);
      for (const workgroupSize of [64, 128, 256] as const) {
        const y = await copyGpu(device, x, { workgroupSize });
        expect(bits(y), `${n} elements, ${workgroupSize} threads`).toEqual(bits(x));
      }
    }
  });

  it('copies 1M elements (4096 workgroups of 64 threads)', async () => {
    const x = randomLogits(1 << 20, 10, 5);
    const y = await copyGpu(device, x, { workgroupSize: 64 });
    expect(bits(y)).toEqual(bits(x));
  });

  it('rejects the same bad input as the CPU reference, before any buffer is made', async () => {
    const created = device.pool.stats().created;
    for (const call of [
      () => copyGpu(device, new Float32Array(0)),
      () => copyGpu(device, new Float32Array(8), { workgroupSize: 32 as 64 }),
    ]) {
      await expect(call()).rejects.toThrow(OpInputError);
    }
    await expect(copyGpu(device, new Float32Array(0))).rejects.toThrow(/got 0/);
    expect(device.pool.stats().created).toBe(created);
  });

  it('rejects resident buffers smaller than the copy', async () => {
    const small = device.storage(256, 'small');
    const big = device.storage(copyByteLength(1000), 'big');
    try {
      const batch = device.beginBatch('copy too small');
      await expect(encodeCopy(device, batch, { input: big, output: small }, 1000)).rejects.toThrow(
        /output buffer must hold 4000 bytes, has 256/,
      );
    } finally {
      device.pool.release(small);
      device.pool.release(big);
    }
  });
});
