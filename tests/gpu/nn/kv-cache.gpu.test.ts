/**
 * Parity of kernels/nn/kv_cache_append.wgsl with kvCacheAppend (src/ops/nn/kv-cache.ts); runs in
 * Node (Dawn) and in Chromium. The cache in a decoding loop: tests/gpu/nn/attention-gqa.gpu.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { kvCacheAppendGpu } from '../../../src/gpu/kernels/nn/kv-cache';
import { kvCacheAppend, type KvAppendShape } from '../../../src/ops/nn/kv-cache';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('kv_cache_append kernel vs CPU reference', () => {
  const device = gpu!;

  /**
   * Appends seeded rows on the GPU and on the CPU twin into the same seeded caches; expects the
   * same bits everywhere. Returns the rows and the cache as they were, for more checks.
   */
  async function expectParity(shape: KvAppendShape, seed: number) {
    const rows = shape.batch * shape.seq * shape.width;
    const cells = shape.batch * shape.capacity * shape.width;
    const [kNew, vNew] = [randomLogits(rows, 1, seed), randomLogits(rows, 1, seed + 1)];
    const [kCache, vCache] = [randomLogits(cells, 1, seed + 2), randomLogits(cells, 1, seed + 3)];
    const before = kCache.slice();
    const [kExpected, vExpected] = [kCache.slice(), vCache.slice()];
    kvCacheAppend(kNew, kExpected, shape);
    kvCacheAppend(vNew, vExpected, shape);
    await kvCacheAppendGpu(device, kNew, vNew, kCache, vCache, shape);
    expect(Array.from(kCache)).toEqual(Array.from(kExpected));
    expect(Array.from(vCache)).toEqual(Array.from(vExpected));
    return { kNew, before, kExpected };
  }

  it('kv cache append matches its CPU twin bit for bit and writes nothing else', async () => {
    await expectParity({ batch: 3, seq: 2, width: 12, capacity: 9, past: 4 }, 1);
  });

  it('writes each sequence at its own past (pasts) as its CPU twin does, bit for bit', async () => {
    const shape = { batch: 4, seq: 1, width: 6, capacity: 7, past: 6, pasts: [0, 6, 3, 5] };
    const { kNew, before, kExpected } = await expectParity(shape, 5);
    // Not the shared past's rows: the per-sequence rows are what moved.
    kvCacheAppend(kNew, before, { ...shape, pasts: undefined });
    expect(Array.from(before)).not.toEqual(Array.from(kExpected));
  });

  it('rejects rows past the capacity, naming the field, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const f = (n: number) => new Float32Array(n);
    await expect(
      kvCacheAppendGpu(device, f(8), f(8), f(24), f(24), {
        batch: 1,
        seq: 2,
        width: 4,
        capacity: 6,
        past: 5,
      }),
    ).rejects.toThrow(/kvCacheAppend: past must be an integer in \[0, 4\], got 5/);
    expect(device.pool.stats().created).toBe(created);
  });
});
