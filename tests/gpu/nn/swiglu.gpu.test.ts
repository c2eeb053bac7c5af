/**
 * Parity of kernels/nn/swiglu*.wgsl with the Float32 CPU twin (src/ops/nn/swiglu.ts); runs in
 * Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { swigluBackwardGpu, swigluForwardGpu } from '../../../src/gpu/kernels/nn/swiglu';
import { swigluBackward, swigluForward } from '../../../src/ops/nn/swiglu';
import { expectClose } from '../../support/expect-close';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('swiglu kernels vs CPU reference', () => {
  const device = gpu!;

  // A few f32 ops per element (exp, a division, products) against the twin's f64 rounded to f32:
  // 1e-6 absolute + 1e-5 relative; a wrong derivative term errs by O(0.1) at these magnitudes.
  // 70,000 elements spread over more than one row of the 2D grid's first dimension on no adapter,
  // but over many workgroups; 1 and 257 test the tail.
  it.each([1, 257, 70_000])('forward and backward match on %i elements', async (count) => {
    const g = uniform(count, 6, count);
    const u = uniform(count, 2, count + 1);
    const dh = uniform(count, 1, count + 2);
    expectClose(await swigluForwardGpu(device, g, u), swigluForward(g, u), 1e-6, 1e-5, 'h');
    const expected = swigluBackward(dh, g, u);
    const actual = await swigluBackwardGpu(device, dh, g, u);
    expectClose(actual.dg, expected.dg, 1e-6, 1e-5, 'dg');
    expectClose(actual.du, expected.du, 1e-6, 1e-5, 'du');
  });

  it('stays finite at gate values where e^v overflows f32 (silu → v or 0, silu′ → 1 or 0)', async () => {
    const g = Float32Array.from([-200, -90, 90, 200, 0]);
    const u = Float32Array.from([1, 2, 3, 4, 5]);
    const h = await swigluForwardGpu(device, g, u);
    expectClose(h, swigluForward(g, u), 1e-6, 1e-6, 'h');
    const { dg, du } = await swigluBackwardGpu(device, new Float32Array(5).fill(1), g, u);
    expect(Array.from(dg).every(Number.isFinite) && Array.from(du).every(Number.isFinite)).toBe(
      true,
    );
    expectClose(dg, swigluBackward(new Float32Array(5).fill(1), g, u).dg, 1e-6, 1e-6, 'dg');
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const f = (n: number) => new Float32Array(n);
    await expect(swigluForwardGpu(device, f(3), f(2))).rejects.toThrow(
      /u must have g.length = 3 elements, got 2/,
    );
    await expect(swigluBackwardGpu(device, f(2), f(3), f(3))).rejects.toThrow(/dh must have/);
    expect(device.pool.stats().created).toBe(created);
  });
});
