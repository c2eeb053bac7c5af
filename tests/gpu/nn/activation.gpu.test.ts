/**
 * Parity of kernels/nn/activation*.wgsl with the Float32 CPU twin (src/ops/nn/activation.ts);
 * runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  activationBackwardGpu,
  activationForwardGpu,
  encodeActivationBackward,
  encodeActivationForward,
} from '../../../src/gpu/kernels/nn/activation';
import { OpInputError } from '../../../src/ops/errors';
import {
  ACTIVATIONS,
  type Activation,
  activationBackward,
  activationForward,
} from '../../../src/ops/nn/activation';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

/**
 * Tolerance per kind, |Δ| ≤ abs + rel·|expected|. relu is exact (a compare, a select, a copy or
 * a multiply by 1). tanh and GELU go through the WGSL tanh builtin, whose accuracy the spec bounds
 * only loosely (inherited from sinh/cosh). Measured on SwiftShader over 262,144 inputs in [−4, 4):
 * tanh ≤ 1.2e-7 forward, ≤ 2.9e-7 backward; GELU ≤ 4.8e-7 forward, ≤ 1.2e-6 backward (its
 * derivative scales tanh's error by up to |x|·du ≈ 10). The bounds leave 4–10× room for other
 * implementations; a wrong formula errs by O(0.01) or more.
 */
const TOL: Record<Activation, { forward: [number, number]; backward: [number, number] }> = {
  relu: { forward: [0, 0], backward: [0, 0] },
  tanh: { forward: [1e-6, 1e-6], backward: [2e-6, 1e-6] },
  gelu: { forward: [2e-6, 1e-6], backward: [1e-5, 1e-6] },
};

function maxExcess(actual: Float32Array, expected: Float32Array, abs: number, rel: number): number {
  let worst = 0;
  for (let i = 0; i < actual.length; i++) {
    const excess = Math.abs(actual[i]! - expected[i]!) - abs - rel * Math.abs(expected[i]!);
    if (!(excess <= worst)) worst = excess; // NaN counts as a failure
  }
  return worst;
}

const COUNTS = [1, 15, 7 * 257, 4096 * 64];

describe.skipIf(!gpu)('activation kernels vs CPU reference', () => {
  const device = gpu!;

  describe.each(ACTIVATIONS)('%s', (kind) => {
    it.each(COUNTS)('forward and backward match on %i elements', async (count) => {
      // Inputs in [−4, 4): past GELU's bend and tanh's saturation knee on both sides.
      const x = uniform(count, 4, count + 1);
      if (kind === 'relu') x[0] = 0; // the kink: derivative 0 at x = 0
      const dy = uniform(count, 1, count + 2);
      const { forward, backward } = TOL[kind];
      const y = await activationForwardGpu(device, x, kind);
      expect(maxExcess(y, activationForward(x, kind), ...forward)).toBeLessThanOrEqual(0);
      const dx = await activationBackwardGpu(device, dy, x, kind);
      expect(maxExcess(dx, activationBackward(dy, x, kind), ...backward)).toBeLessThanOrEqual(0);
    });
  });

  it('stays finite for huge inputs and saturates like the CPU twin', async () => {
    const x = new Float32Array([30, -30, 1e4, -1e4, 1e13, -1e13, 3e38, -3e38]);
    const dy = new Float32Array(x.length).fill(1);
    for (const kind of ACTIVATIONS) {
      const y = await activationForwardGpu(device, x, kind);
      const dx = await activationBackwardGpu(device, dy, x, kind);
      const expectedY = activationForward(x, kind);
      const expectedDx = activationBackward(dy, x, kind);
      for (let i = 0; i < x.length; i++) {
        expect(y[i], `${kind}(${x[i]})`).toBeCloseTo(expectedY[i]!, 3);
        expect(dx[i], `${kind}′(${x[i]})`).toBeCloseTo(expectedDx[i]!, 6);
      }
    }
  });

  it('runs on slices at 256-byte offsets, writing nothing outside them', async () => {
    const count = 1000;
    const x = uniform(count, 4, 1);
    const dy = uniform(count, 1, 2);
    const ins = new PackedSlices(device, { dy, x });
    const outs = new PackedSlices(device, { y: count, dx: count });
    try {
      const batch = device.beginBatch('activation slices');
      await encodeActivationForward(
        device,
        batch,
        { x: ins.ref('x'), y: outs.ref('y') },
        count,
        'gelu',
      );
      await encodeActivationBackward(
        device,
        batch,
        { dy: ins.ref('dy'), x: ins.ref('x'), dx: outs.ref('dx') },
        count,
        'gelu',
      );
      batch.submit();
      const { slices, gapsIntact } = await outs.read();
      expect(gapsIntact).toBe(true);
      const { forward, backward } = TOL.gelu;
      expect(maxExcess(slices.y, activationForward(x, 'gelu'), ...forward)).toBeLessThanOrEqual(0);
      expect(
        maxExcess(slices.dx, activationBackward(dy, x, 'gelu'), ...backward),
      ).toBeLessThanOrEqual(0);
    } finally {
      ins.release();
      outs.release();
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(
      activationForwardGpu(device, new Float32Array(2), 'silu' as Activation),
    ).rejects.toThrow(/kind must be one of 'gelu', 'tanh', 'relu', got 'silu'/);
    await expect(activationForwardGpu(device, new Float32Array(0), 'relu')).rejects.toThrow(
      OpInputError,
    );
    await expect(
      activationBackwardGpu(device, new Float32Array(3), new Float32Array(2), 'tanh'),
    ).rejects.toThrow(/dy must have x.length = 2 elements, got 3/);
    expect(device.pool.stats().created).toBe(created);
  });
});
