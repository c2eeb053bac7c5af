/**
 * Parity of kernels/nn/unpack_f16.wgsl with its CPU twin (src/ops/nn/unpack-f16.ts): every f16
 * bit pattern, widened on the GPU, against the exact conversion. Runs in Node (Dawn) and Chromium.
 */
import { describe, expect, it } from 'vitest';
import { unpackF16Gpu } from '../../../src/gpu/kernels/nn/unpack-f16';
import { packF16, unpackF16 } from '../../../src/ops/nn/unpack-f16';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('unpack_f16 kernel vs CPU reference', () => {
  const device = gpu!;

  it('widens every finite f16 exactly (all 63,488 of them; subnormals may flush to ±0)', async () => {
    // Every bit pattern but inf and NaN (exponent 31): WGSL leaves their unpacking undefined.
    const halves: number[] = [];
    for (let h = 0; h < 0x10000; h++) if ((h & 0x7c00) !== 0x7c00) halves.push(h);
    const packed = new Uint32Array(Math.ceil(halves.length / 2));
    halves.forEach((h, i) => (packed[i >>> 1]! |= (i & 1 ? h << 16 : h) >>> 0));
    const expected = unpackF16(packed, halves.length);
    const actual = await unpackF16Gpu(device, packed, halves.length);
    let flushed = 0;
    for (let i = 0; i < halves.length; i++) {
      if (Object.is(actual[i], expected[i])) continue;
      // WGSL lets an implementation flush a subnormal f16 (exponent 0) to zero of the same sign.
      const subnormal = (halves[i]! & 0x7c00) === 0;
      expect(subnormal && actual[i] === 0, `half 0x${halves[i]!.toString(16)}`).toBe(true);
      flushed++;
    }
    expect(flushed).toBeLessThanOrEqual(2 * 1023);
  });

  it.each([1, 3, 70_001])(
    'round-trips %i packed weights (odd counts end in half a word)',
    async (count) => {
      const values = uniform(count, 4, count);
      const { packed } = packF16(values);
      expect(Array.from(await unpackF16Gpu(device, packed, count))).toEqual(
        Array.from(unpackF16(packed, count)),
      );
    },
  );

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(unpackF16Gpu(device, new Uint32Array(1), 3)).rejects.toThrow(/packed must have/);
    expect(device.pool.stats().created).toBe(created);
  });
});
