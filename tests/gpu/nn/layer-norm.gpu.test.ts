/**
 * Parity of kernels/nn/layer_norm*.wgsl with the Float32 CPU twin (src/ops/nn/layer-norm.ts);
 * runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeLayerNormBackward,
  encodeLayerNormForward,
  layerNormBackwardGpu,
  layerNormForwardGpu,
} from '../../../src/gpu/kernels/nn/layer-norm';
import { OpInputError } from '../../../src/ops/errors';
import { layerNormBackward, layerNormForward } from '../../../src/ops/nn/layer-norm';
import { expectClose } from '../../support/expect-close';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

/**
 * Σ_rows |dout|·(|xhat| + 1) per column: the scale of the dgamma/dbeta sums. An f32 sum of n terms
 * errs by at most ~n·2^-24·Σ|terms| and typically ~√n·2^-24·Σ|terms|; 1e-5 of this scale is
 * between the two for the row counts here, and far below any real error (a wrong term is O(1)).
 */
function columnScale(
  dout: Float32Array,
  x: Float32Array,
  mean: Float32Array,
  rstd: Float32Array,
  rows: number,
  cols: number,
): Float64Array {
  const scale = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      scale[c]! += Math.abs(dout[i]!) * (Math.abs((x[i]! - mean[r]!) * rstd[r]!) + 1);
    }
  }
  return scale;
}

function inputs(rows: number, cols: number, seed: number) {
  return {
    x: uniform(rows * cols, 2, seed),
    gamma: uniform(cols, 1.5, seed + 1),
    beta: uniform(cols, 1, seed + 2),
    dout: uniform(rows * cols, 1, seed + 3),
  };
}

/** |Δmean| allowed for rows of uniform(±2) values: see the forward tolerances below. */
const MEAN_TOL = 5e-6;

const SHAPES: [number, number][] = [
  [1, 1],
  [3, 5],
  [7, 257],
  [4096, 64],
];

describe.skipIf(!gpu)('layer_norm kernels vs CPU reference', () => {
  const device = gpu!;

  // Forward tolerances. The kernel sums d = x − x[row, 0] in f32 (sequentially when a thread owns
  // the row): partial sums reach C·|x[row, 0] − mean| ≈ 250·2 here, whose ulp (3e-5) over √C
  // additions gives |Δmean| ≈ 1e-6 for these rows of spread ~1.2; allow 5e-6 (MEAN_TOL).
  // out = xhat·gamma + beta with |xhat| ≲ 4, |gamma| ≤ 1.5: |Δout| ≲ rstd·|Δmean|·|gamma| + a few
  // ulps ≈ 2e-6; 1e-5 absolute + 1e-5 relative leaves room without hiding a wrong formula
  // (errors of O(0.1)).
  it.each(SHAPES)('forward matches on %i × %i', async (rows, cols) => {
    const { x, gamma, beta } = inputs(rows, cols, rows * 7 + cols);
    const expected = layerNormForward(x, gamma, beta, rows, cols);
    const actual = await layerNormForwardGpu(device, x, gamma, beta, rows, cols);
    expectClose(actual.out, expected.out, 1e-5, 1e-5, 'out');
    expectClose(actual.mean, expected.mean, MEAN_TOL, 1e-6, 'mean');
    expectClose(actual.rstd, expected.rstd, 0, 1e-5, 'rstd');
  });

  it('forward is accurate for rows far from zero (x = 1000 + noise), where E[x²] − E[x]² fails', async () => {
    // In f32, E[x²] ≈ 1e6 has an ulp of 0.06 while var ≈ 3e-5: a one-pass variance would be noise.
    // The kernel's two passes over x − x[row, 0] keep the sums at the noise's scale.
    const rows = 64;
    const cols = 256;
    const x = uniform(rows * cols, 0.01, 5).map((v) => 1000 + v);
    const gamma = uniform(cols, 1.5, 6);
    const beta = uniform(cols, 1, 7);
    const expected = layerNormForward(x, gamma, beta, rows, cols);
    const actual = await layerNormForwardGpu(device, x, gamma, beta, rows, cols);
    expectClose(actual.out, expected.out, 2e-5, 1e-5, 'out');
    expectClose(actual.mean, expected.mean, 0, 1e-7, 'mean'); // one f32 ulp of 1000
    expectClose(actual.rstd, expected.rstd, 0, 1e-5, 'rstd');
  });

  // Backward: |dx| ~ rstd·|g| ≲ 5 here, each a few f32 ops after two f32 row means: 2e-5
  // absolute + 1e-5 relative. dgamma/dbeta: see columnScale().
  it.each(SHAPES)('backward matches on %i × %i', async (rows, cols) => {
    const { x, gamma, beta, dout } = inputs(rows, cols, rows * 11 + cols);
    const { mean, rstd } = layerNormForward(x, gamma, beta, rows, cols);
    const expected = layerNormBackward(dout, x, gamma, mean, rstd, rows, cols);
    const actual = await layerNormBackwardGpu(device, dout, x, gamma, mean, rstd, rows, cols);
    expectClose(actual.dx, expected.dx, 2e-5, 1e-5, 'dx');
    const scale = columnScale(dout, x, mean, rstd, rows, cols);
    for (let c = 0; c < cols; c++) {
      const tol = 1e-5 * scale[c]! + 1e-7;
      expect(Math.abs(actual.dgamma[c]! - expected.dgamma[c]!), `dgamma[${c}]`).toBeLessThan(tol);
      expect(Math.abs(actual.dbeta[c]! - expected.dbeta[c]!), `dbeta[${c}]`).toBeLessThan(tol);
    }
  });

  // The default is 1 thread per row on software adapters (the tests above) and 32–64 on
  // hardware (32: the slices test below; 64: here). Every split of a row over threads must agree
  // with the CPU, including rows that do not fill the last workgroup (13 rows; 64 / threadsPerRow
  // rows per workgroup).
  it.each([2, 64] as const)('threadsPerRow = %i matches on 13 × 100', async (threadsPerRow) => {
    const rows = 13;
    const cols = 100;
    const { x, gamma, beta, dout } = inputs(rows, cols, threadsPerRow);
    const fwd = layerNormForward(x, gamma, beta, rows, cols);
    const bwd = layerNormBackward(dout, x, gamma, fwd.mean, fwd.rstd, rows, cols);
    const options = { threadsPerRow };
    const gpuFwd = await layerNormForwardGpu(device, x, gamma, beta, rows, cols, 1e-5, options);
    expectClose(gpuFwd.out, fwd.out, 1e-5, 1e-5, 'out');
    expectClose(gpuFwd.mean, fwd.mean, MEAN_TOL, 1e-6, 'mean');
    expectClose(gpuFwd.rstd, fwd.rstd, 0, 1e-5, 'rstd');
    const gpuBwd = await layerNormBackwardGpu(
      device,
      dout,
      x,
      gamma,
      fwd.mean,
      fwd.rstd,
      rows,
      cols,
      options,
    );
    expectClose(gpuBwd.dx, bwd.dx, 2e-5, 1e-5, 'dx');
  });

  it('backward gives the same bits on every run (no atomics)', async () => {
    const rows = 300;
    const cols = 100;
    const { x, gamma, beta, dout } = inputs(rows, cols, 3);
    const { mean, rstd } = layerNormForward(x, gamma, beta, rows, cols);
    const a = await layerNormBackwardGpu(device, dout, x, gamma, mean, rstd, rows, cols);
    const b = await layerNormBackwardGpu(device, dout, x, gamma, mean, rstd, rows, cols);
    expect(Array.from(b.dgamma)).toEqual(Array.from(a.dgamma));
    expect(Array.from(b.dbeta)).toEqual(Array.from(a.dbeta));
    expect(Array.from(b.dx)).toEqual(Array.from(a.dx));
  });

  it.each([
    [7, 257, undefined],
    [4096, 64, undefined],
    [301, 64, 32],
  ] as const)(
    'runs on slices at 256-byte offsets, and accumulateDx adds into dx (%i × %i, threadsPerRow %s)',
    async (rows, cols, threadsPerRow) => {
      const { x, gamma, beta, dout } = inputs(rows, cols, 21);
      const dxBefore = uniform(rows * cols, 3, 22);
      const fwd = layerNormForward(x, gamma, beta, rows, cols);
      const bwd = layerNormBackward(dout, x, gamma, fwd.mean, fwd.rstd, rows, cols);
      // Inputs in one buffer, outputs in another: a dispatch may not bind one buffer both
      // writable and read-only, so parameters, activations and gradients live in separate ones.
      const ins = new PackedSlices(device, { gamma, beta, x, dout });
      const outs = new PackedSlices(device, {
        out: rows * cols,
        mean: rows,
        rstd: rows,
        dx: dxBefore,
        dgamma: cols,
        dbeta: cols,
      });
      const stats = new PackedSlices(device, { mean: fwd.mean, rstd: fwd.rstd });
      try {
        const batch = device.beginBatch('layerNorm slices');
        await encodeLayerNormForward(
          device,
          batch,
          {
            x: ins.ref('x'),
            gamma: ins.ref('gamma'),
            beta: ins.ref('beta'),
            out: outs.ref('out'),
            mean: outs.ref('mean'),
            rstd: outs.ref('rstd'),
          },
          rows,
          cols,
          1e-5,
          { threadsPerRow },
        );
        await encodeLayerNormBackward(
          device,
          batch,
          {
            dout: ins.ref('dout'),
            x: ins.ref('x'),
            gamma: ins.ref('gamma'),
            mean: stats.ref('mean'),
            rstd: stats.ref('rstd'),
            dx: outs.ref('dx'),
            dgamma: outs.ref('dgamma'),
            dbeta: outs.ref('dbeta'),
          },
          rows,
          cols,
          { accumulateDx: true, threadsPerRow },
        );
        batch.submit();
        const { slices, gapsIntact } = await outs.read();
        expect(gapsIntact).toBe(true);
        expectClose(slices.out, fwd.out, 1e-5, 1e-5, 'out');
        expectClose(slices.mean, fwd.mean, MEAN_TOL, 1e-6, 'mean');
        expectClose(slices.rstd, fwd.rstd, 0, 1e-5, 'rstd');
        const dxExpected = dxBefore.map((v, i) => v + bwd.dx[i]!);
        expectClose(slices.dx, dxExpected, 3e-5, 1e-5, 'dx (accumulated)');
        const scale = columnScale(dout, x, fwd.mean, fwd.rstd, rows, cols);
        expectClose(slices.dbeta, bwd.dbeta, 1e-5 * Math.max(...scale), 0, 'dbeta');
        expectClose(slices.dgamma, bwd.dgamma, 1e-5 * Math.max(...scale), 0, 'dgamma');
      } finally {
        ins.release();
        outs.release();
        stats.release();
      }
    },
  );

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const f = (n: number) => new Float32Array(n);
    await expect(layerNormForwardGpu(device, f(5), f(2), f(2), 2, 2)).rejects.toThrow(
      /x must have rows × cols = 4 elements, got 5/,
    );
    await expect(layerNormForwardGpu(device, f(4), f(2), f(2), 2, 2, -1)).rejects.toThrow(
      OpInputError,
    );
    await expect(layerNormBackwardGpu(device, f(4), f(4), f(2), f(1), f(2), 2, 2)).rejects.toThrow(
      /mean must have rows = 2 elements, got 1/,
    );
    expect(device.pool.stats().created).toBe(created);
  });

  it('encode rejects a slice too small for the shape', async () => {
    const slices = new PackedSlices(device, { x: 8, gamma: 4, beta: 4, out: 7, mean: 2, rstd: 2 });
    try {
      const batch = device.beginBatch('layerNorm bad slice');
      const refs = {
        x: slices.ref('x'),
        gamma: slices.ref('gamma'),
        beta: slices.ref('beta'),
        out: slices.ref('out'),
        mean: slices.ref('mean'),
        rstd: slices.ref('rstd'),
      };
      await expect(encodeLayerNormForward(device, batch, refs, 2, 4)).rejects.toThrow(
        /layerNormForward: out binding must hold 8 f32 \(32 bytes\), has 28 bytes/,
      );
    } finally {
      slices.release();
    }
  });
});
