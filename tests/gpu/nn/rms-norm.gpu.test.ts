/**
 * Parity of kernels/nn/rms_norm*.wgsl with the Float32 CPU twin (src/ops/nn/rms-norm.ts);
 * runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeRmsNormBackward,
  encodeRmsNormForward,
  rmsNormBackwardGpu,
  rmsNormForwardGpu,
} from '../../../src/gpu/kernels/nn/rms-norm';
import { rmsNormBackward, rmsNormForward } from '../../../src/ops/nn/rms-norm';
import { expectClose } from '../../support/expect-close';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

/** Llama's and SmolLM2's rms_norm_eps. */
const EPS = 1e-5;

function inputs(rows: number, cols: number, seed: number) {
  return {
    x: uniform(rows * cols, 2, seed),
    w: uniform(cols, 1.5, seed + 1),
    dout: uniform(rows * cols, 1, seed + 2),
  };
}

/**
 * Σ_rows |dout·x·rstd| per column: the scale of the dw sums. An f32 sum of n terms errs by at most
 * ~n·2^-24 of it and typically ~√n·2^-24; 1e-5 of it is between the two for these row counts and
 * far below a wrong term (O(1)).
 */
function columnScale(dout: Float32Array, x: Float32Array, rstd: Float32Array, cols: number) {
  const scale = new Float64Array(cols);
  for (let i = 0; i < dout.length; i++) {
    scale[i % cols]! += Math.abs(dout[i]! * x[i]! * rstd[Math.floor(i / cols)]!);
  }
  return scale;
}

/** (rows, C): a single element, odd sizes, a row wider than a workgroup, many short rows. */
const SHAPES: [number, number][] = [
  [1, 1],
  [3, 5],
  [7, 257],
  [4096, 64],
];

describe.skipIf(!gpu)('rms_norm kernels vs CPU reference', () => {
  const device = gpu!;

  // Forward: one f32 sum of squares (≤ 257 terms of ≤ 4) then a few f32 ops: |Δrstd| ~ 1e-7
  // relative; |out| ≲ 4·1.5, so 1e-5 absolute + 1e-5 relative is ample and far below a wrong
  // formula (a missing √, a mean instead of the mean square: errors of O(0.1)).
  it.each(SHAPES)('forward matches on %i × %i', async (rows, cols) => {
    const { x, w } = inputs(rows, cols, rows * 7 + cols);
    const expected = rmsNormForward(x, w, rows, cols, EPS);
    const actual = await rmsNormForwardGpu(device, x, w, rows, cols, EPS);
    expectClose(actual.out, expected.out, 1e-5, 1e-5, 'out');
    expectClose(actual.rstd, expected.rstd, 0, 1e-5, 'rstd');
  });

  it('forward keeps eps inside the square root (rows of zeros give rstd = 1/√eps, out 0)', async () => {
    const rows = 3;
    const cols = 8;
    const x = new Float32Array(rows * cols);
    const w = uniform(cols, 1, 1);
    const actual = await rmsNormForwardGpu(device, x, w, rows, cols, 1e-6);
    expectClose(actual.rstd, [1000, 1000, 1000], 0, 1e-6, 'rstd');
    expect(Array.from(actual.out).every((v) => v === 0)).toBe(true);
  });

  // Backward: |dx| ≲ rstd·|dout·w| ≲ 5 after one f32 row mean: 2e-5 absolute + 1e-5 relative.
  it.each(SHAPES)('backward matches on %i × %i', async (rows, cols) => {
    const { x, w, dout } = inputs(rows, cols, rows * 11 + cols);
    const { rstd } = rmsNormForward(x, w, rows, cols, EPS);
    const expected = rmsNormBackward(dout, x, w, rstd, rows, cols);
    const actual = await rmsNormBackwardGpu(device, dout, x, w, rstd, rows, cols);
    expectClose(actual.dx, expected.dx, 2e-5, 1e-5, 'dx');
    const scale = columnScale(dout, x, rstd, cols);
    for (let c = 0; c < cols; c++) {
      const tol = 1e-5 * scale[c]! + 1e-7;
      expect(Math.abs(actual.dw[c]! - expected.dw[c]!), `dw[${c}]`).toBeLessThan(tol);
    }
  });

  // Software adapters default to 1 thread per row; hardware to 32–64. Every split must agree,
  // including rows that do not fill the last workgroup (13 rows).
  it.each([2, 32, 64] as const)('threadsPerRow = %i matches on 13 × 100', async (threadsPerRow) => {
    const rows = 13;
    const cols = 100;
    const { x, w, dout } = inputs(rows, cols, threadsPerRow);
    const fwd = rmsNormForward(x, w, rows, cols, EPS);
    const bwd = rmsNormBackward(dout, x, w, fwd.rstd, rows, cols);
    const options = { threadsPerRow };
    const gpuFwd = await rmsNormForwardGpu(device, x, w, rows, cols, EPS, options);
    expectClose(gpuFwd.out, fwd.out, 1e-5, 1e-5, 'out');
    expectClose(gpuFwd.rstd, fwd.rstd, 0, 1e-5, 'rstd');
    const gpuBwd = await rmsNormBackwardGpu(device, dout, x, w, fwd.rstd, rows, cols, options);
    expectClose(gpuBwd.dx, bwd.dx, 2e-5, 1e-5, 'dx');
  });

  it('backward gives the same bits on every run (no atomics)', async () => {
    const rows = 300;
    const cols = 100;
    const { x, w, dout } = inputs(rows, cols, 3);
    const { rstd } = rmsNormForward(x, w, rows, cols, EPS);
    const a = await rmsNormBackwardGpu(device, dout, x, w, rstd, rows, cols);
    const b = await rmsNormBackwardGpu(device, dout, x, w, rstd, rows, cols);
    expect(Array.from(b.dw)).toEqual(Array.from(a.dw));
    expect(Array.from(b.dx)).toEqual(Array.from(a.dx));
  });

  it('runs on slices at 256-byte offsets; accumulateDx adds into dx; a frozen gain has no dw', async () => {
    const rows = 301;
    const cols = 64;
    const { x, w, dout } = inputs(rows, cols, 21);
    const dxBefore = uniform(rows * cols, 3, 22);
    const fwd = rmsNormForward(x, w, rows, cols, EPS);
    const bwd = rmsNormBackward(dout, x, w, fwd.rstd, rows, cols);
    // Inputs, outputs and the saved rstd in separate buffers: a dispatch may not bind one buffer
    // both writable and read-only.
    const ins = new PackedSlices(device, { w, x, dout });
    const outs = new PackedSlices(device, { out: rows * cols, rstd: rows, dx: dxBefore });
    const saved = new PackedSlices(device, { rstd: fwd.rstd });
    try {
      const batch = device.beginBatch('rmsNorm slices');
      await encodeRmsNormForward(
        device,
        batch,
        { x: ins.ref('x'), w: ins.ref('w'), out: outs.ref('out'), rstd: outs.ref('rstd') },
        { rows, cols, eps: EPS },
      );
      await encodeRmsNormBackward(
        device,
        batch,
        {
          dout: ins.ref('dout'),
          x: ins.ref('x'),
          w: ins.ref('w'),
          rstd: saved.ref('rstd'),
          dx: outs.ref('dx'),
        },
        { rows, cols },
        { accumulateDx: true },
      );
      batch.submit();
      const { slices, gapsIntact } = await outs.read();
      expect(gapsIntact).toBe(true);
      expectClose(slices.out, fwd.out, 1e-5, 1e-5, 'out');
      expectClose(slices.rstd, fwd.rstd, 0, 1e-5, 'rstd');
      const dxExpected = dxBefore.map((v, i) => v + bwd.dx[i]!);
      expectClose(slices.dx, dxExpected, 3e-5, 1e-5, 'dx (accumulated)');
    } finally {
      ins.release();
      outs.release();
      saved.release();
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const f = (n: number) => new Float32Array(n);
    await expect(rmsNormForwardGpu(device, f(5), f(2), 2, 2, EPS)).rejects.toThrow(
      /x must have rows × cols = 4 elements, got 5/,
    );
    await expect(rmsNormForwardGpu(device, f(4), f(2), 2, 2, 0)).rejects.toThrow(/eps must be in/);
    await expect(rmsNormBackwardGpu(device, f(4), f(4), f(2), f(1), 2, 2)).rejects.toThrow(
      /rstd must have rows = 2 elements, got 1/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
