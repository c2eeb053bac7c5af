/**
 * Parity of kernels/nn/axpy.wgsl with its CPU twin (src/ops/nn/axpy.ts); runs in Node (Dawn) and
 * in Chromium. The twin rounds α·x + y once; a GPU may round α·x first, so results agree to
 * about one ulp of the operands, not bit for bit.
 */
import { describe, expect, it } from 'vitest';
import { axpyGpu, encodeAxpy } from '../../../src/gpu/kernels/nn/axpy';
import { OpInputError } from '../../../src/ops/errors';
import { axpy } from '../../../src/ops/nn/axpy';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';

const gpu = await testGpu();

/**
 * Largest |a − b| relative to the operands' scale |α·x| + |y| (a relative bound on the result
 * itself would not hold where α·x and y nearly cancel).
 */
function worstRelative(
  a: Float32Array,
  b: Float32Array,
  alpha: number,
  x: Float32Array,
  y: Float32Array,
): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const scale = Math.abs(alpha * x[i]!) + Math.abs(y[i]!);
    const rel = Math.abs(a[i]! - b[i]!) / Math.max(scale, 1e-30);
    if (!(rel <= worst)) worst = rel;
  }
  return worst;
}

describe.skipIf(!gpu)('axpy kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 0.5],
    [255, -0.01],
    [7 * 257, 3],
    [4096 * 17, -1.5],
  ])('y ← αx + y matches on %i elements (α = %f)', async (count, alpha) => {
    const x = uniform(count, 4, count);
    const y = uniform(count, 2, count + 1);
    const onGpu = y.slice();
    const onCpu = y.slice();
    await axpyGpu(device, alpha, x, onGpu);
    axpy(alpha, x, onCpu);
    // One or two roundings of 2^-24 each, relative to the operands.
    expect(worstRelative(onGpu, onCpu, alpha, x, y)).toBeLessThan(2.5e-7);
    // Not a no-op: y moved by α·x.
    expect(Math.abs(onGpu[0]! - y[0]!)).toBeGreaterThan(0);
  });

  it('touches only the first `count` elements of a longer buffer', async () => {
    const x = new Float32Array(600).fill(2);
    const y = new Float32Array(600).fill(1);
    const xb = device.upload(x, 'x');
    const yb = device.upload(y, 'y');
    try {
      const batch = device.beginBatch('axpy head');
      await encodeAxpy(device, batch, { x: xb, y: yb }, 300, 0.25);
      batch.submit();
      const out = await device.readF32(yb, 600);
      expect([...new Set(out.subarray(0, 300))]).toEqual([1.5]);
      expect([...new Set(out.subarray(300))]).toEqual([1]);
    } finally {
      device.pool.release(xb);
      device.pool.release(yb);
    }
  });

  it('rejects a non-finite α and a length mismatch, naming the field', async () => {
    const y = new Float32Array(4);
    await expect(axpyGpu(device, NaN, new Float32Array(4), y)).rejects.toThrow(/alpha/);
    await expect(axpyGpu(device, 1, new Float32Array(3), y)).rejects.toThrow(OpInputError);
    expect(() => axpy(Infinity, new Float32Array(4), y)).toThrow(/axpy.*alpha.*finite/);
  });
});
