/**
 * Parity of kernels/nn/kv_cache_append.wgsl with kvCacheAppend (src/ops/nn/kv-cache.ts); runs in
 * Node (Dawn) and in Chromium. The cache in a decoding loop: tests/gpu/nn/attention-gqa.gpu.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { kvCacheAppendGpu } from '../../../src/gpu/kernels/nn/kv-cache';
import { kvCacheAppend } from '../../../src/ops/nn/kv-cache';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('kv_cache_append kernel vs CPU reference', () => {
  const device = gpu!;

  it('kv cache append matches its CPU twin bit for bit and writes nothing else', async () => {
    const shape = { batch: 3, seq: 2, width: 12, capacity: 9, past: 4 };
    const kNew = randomLogits(3 * 2 * 12, 1, 1);
    const vNew = randomLogits(3 * 2 * 12, 1, 2);
    const kCache = randomLogits(3 * 9 * 12, 1, 3);
    const vCache = randomLogits(3 * 9 * 12, 1, 4);
    const kExpected = kCache.slice();
    const vExpected = vCache.slice();
    kvCacheAppend(kNew, kExpected, shape);
    kvCacheAppend(vNew, vExpected, shape);
    await kvCacheAppendGpu(device, kNew, vNew, kCache, vCache, shape);
    expect(Array.from(kCache)).toEqual(Array.from(kExpected));
    expect(Array.from(vCache)).toEqual(Array.from(vExpected));
  });

  it('writes each sequence at its own past (pasts) as its CPU twin does, bit for bit', async () => {
    const shape = { batch: 4, seq: 1, width: 6, capacity: 7, past: 6, pasts: [0, 6, 3, 5] };
    const kNew = randomLogits(4 * 6, 1, 5);
    const vNew = randomLogits(4 * 6, 1, 6);
    const kCache = randomLogits(4 * 7 * 6, 1, 7);
    const vCache = randomLogits(4 * 7 * 6, 1, 8);
    const kExpected = kCache.slice();
    const vExpected = vCache.slice();
    kvCacheAppend(kNew, kExpected, shape);
    kvCacheAppend(vNew, vExpected, shape);
    // Not the shared past's rows: the per-sequence rows are what moved.
    const shared = kCache.slice();
    kvCacheAppend(kNew, shared, { ...shape, pasts: undefined });
    expect(Array.from(shared)).not.toEqual(Array.from(kExpected));
    await kvCacheAppendGpu(device, kNew, vNew, kCache, vCache, shape);
    expect(Array.from(kCache)).toEqual(Array.from(kExpected));
    expect(Array.from(vCache)).toEqual(Array.from(vExpected));
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
