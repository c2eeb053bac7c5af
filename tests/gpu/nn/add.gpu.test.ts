/**
 * Parity of kernels/nn/add.wgsl and add_into.wgsl with the Float32 CPU twin (src/ops/nn/add.ts);
 * runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { addGpu, addIntoGpu, encodeAdd, encodeAddInto } from '../../../src/gpu/kernels/nn/add';
import { OpInputError } from '../../../src/ops/errors';
import { add, addInto } from '../../../src/ops/nn/add';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

/** Indices where a and b differ bit for bit (a loop: deep equality of 262k-element arrays is slow). */
function mismatches(a: Float32Array, b: Float32Array): number[] {
  expect(a.length).toBe(b.length);
  const bad: number[] = [];
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) bad.push(i);
  return bad;
}

// WGSL's f32 addition is correctly rounded, and so is the CPU twin's (the float64 sum of two f32
// rounded once to f32: double rounding is harmless with 53 ≥ 2·24 + 2 bits), so the results are
// compared bit for bit.
describe.skipIf(!gpu)('add kernels vs CPU reference', () => {
  const device = gpu!;

  it.each([1, 15, 7 * 257, 4096 * 64])(
    'add and addInto match exactly on %i elements',
    async (count) => {
      const a = uniform(count, 4, count);
      const b = uniform(count, 1e-3, count + 1);
      expect(mismatches(await addGpu(device, a, b), add(a, b))).toEqual([]);
      const accGpu = a.slice();
      const accCpu = a.slice();
      await addIntoGpu(device, accGpu, b);
      addInto(accCpu, b);
      expect(mismatches(accGpu, accCpu)).toEqual([]);
    },
  );

  it('runs on slices at 256-byte offsets, writing nothing outside them', async () => {
    const count = 777;
    const a = uniform(count, 2, 1);
    const b = uniform(count, 2, 2);
    const ins = new PackedSlices(device, { a, b });
    const outs = new PackedSlices(device, { out: count, acc: a });
    try {
      const batch = device.beginBatch('add slices');
      await encodeAdd(
        device,
        batch,
        { a: ins.ref('a'), b: ins.ref('b'), out: outs.ref('out') },
        count,
      );
      await encodeAddInto(device, batch, { acc: outs.ref('acc'), x: ins.ref('b') }, count);
      batch.submit();
      const { slices, gapsIntact } = await outs.read();
      expect(gapsIntact).toBe(true);
      expect(mismatches(slices.out, add(a, b))).toEqual([]);
      expect(mismatches(slices.acc, add(a, b))).toEqual([]);
    } finally {
      ins.release();
      outs.release();
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(addGpu(device, new Float32Array(2), new Float32Array(3))).rejects.toThrow(
      /add: b must have a.length = 2 elements, got 3/,
    );
    await expect(addIntoGpu(device, new Float32Array(0), new Float32Array(0))).rejects.toThrow(
      OpInputError,
    );
    expect(device.pool.stats().created).toBe(created);
  });

  it('encode rejects a count larger than a binding', async () => {
    const slices = new PackedSlices(device, { acc: 10, x: 12 });
    try {
      const batch = device.beginBatch('add bad count');
      await expect(
        encodeAddInto(device, batch, { acc: slices.ref('acc'), x: slices.ref('x') }, 12),
      ).rejects.toThrow(/addInto: acc binding must hold 12 f32 \(48 bytes\), has 40 bytes/);
    } finally {
      slices.release();
    }
  });
});
