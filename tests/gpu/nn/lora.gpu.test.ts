/**
 * Parity of the GPU LoRA adapter (src/gpu/kernels/nn/lora.ts: matmul + axpy) with its CPU twin
 * (src/ops/nn/lora.ts) run in float64; runs in Node (Dawn) and in Chromium.
 *
 * Tolerance. Each output is two chained f32 products (k = inDim or outDim or rows, then k = r)
 * and one rounding of the scale. As in matmul.gpu.test.ts we allow 2^-22·(√k + 1) per product
 * times Σ|terms|, where Σ|terms| is the CPU twin run on |x|, |A|, |B|, |y| and |s| (a bound on
 * every partial sum's size), so tol = 2^-22·(√k₁ + √k₂ + 3)·max Σ|terms| per output.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeLoraForward,
  loraBackwardGpu,
  loraForwardGpu,
} from '../../../src/gpu/kernels/nn/lora';
import { OpInputError } from '../../../src/ops/errors';
import { type LoraShape, loraBackward, loraForward } from '../../../src/ops/nn/lora';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

const abs = (x: Float32Array) => new Float64Array(Array.from(x, Math.abs));
const f64 = (x: Float32Array) => Float64Array.from(x);

function expectWithin(label: string, got: Float32Array, want: Float64Array, tol: number): void {
  expect(got.length, label).toBe(want.length);
  let worst = 0;
  let at = 0;
  for (let i = 0; i < got.length; i++) {
    const e = Math.abs(got[i]! - want[i]!);
    if (!(e <= worst)) [worst, at] = [e, i];
  }
  expect(worst, `${label}[${at}]: ${got[at]} vs ${want[at]} (tol ${tol})`).toBeLessThanOrEqual(tol);
}

const tolerance = (terms: Float64Array, k1: number, k2: number) =>
  2 ** -22 * (Math.sqrt(k1) + Math.sqrt(k2) + 3) * Math.max(...terms);

const SHAPES: [string, LoraShape, number][] = [
  ['q_proj-like, s = 2', { rows: 7, inDim: 64, outDim: 64, rank: 4 }, 2],
  ['down_proj-like past a tile, s = 0.5', { rows: 70, inDim: 130, outDim: 33, rank: 8 }, 0.5],
  ['rank 1, s = 1 (no scratch)', { rows: 3, inDim: 5, outDim: 9, rank: 1 }, 1],
  ['negative scale', { rows: 4, inDim: 16, outDim: 12, rank: 3 }, -1.5],
];

describe.skipIf(!gpu)('LoRA on the GPU vs the CPU twin', () => {
  const device = gpu!;

  it.each(SHAPES)('forward: %s', async (_, shape, scale) => {
    const { rows, inDim, outDim, rank } = shape;
    const x = randomLogits(rows * inDim, 1, 11);
    const a = randomLogits(rank * inDim, 1, 12);
    const b = randomLogits(outDim * rank, 1, 13);
    const y = randomLogits(rows * outDim, 1, 14);
    const got = await loraForwardGpu(device, x, a, b, y, shape, scale);
    const want = loraForward(f64(x), f64(a), f64(b), f64(y), shape, scale);
    const terms = loraForward(abs(x), abs(a), abs(b), abs(y), shape, Math.abs(scale));
    expectWithin('u', got.u, want.u, tolerance(terms.u, inDim, 1));
    expectWithin('out', got.out, want.out, tolerance(terms.out, inDim, rank));
    // The adapter's update is not lost in the rounding: out differs from y.
    expect(Math.max(...got.out.map((v, i) => Math.abs(v - y[i]!)))).toBeGreaterThan(1e-2);
  });

  it.each(SHAPES)('backward with and without dx accumulation: %s', async (_, shape, scale) => {
    const { rows, inDim, outDim, rank } = shape;
    const dy = randomLogits(rows * outDim, 1, 21);
    const x = randomLogits(rows * inDim, 1, 22);
    const u = randomLogits(rows * rank, 1, 23);
    const a = randomLogits(rank * inDim, 1, 24);
    const b = randomLogits(outDim * rank, 1, 25);
    const acc = randomLogits(rows * inDim, 1, 26);
    for (const accumulateDx of [undefined, acc]) {
      const options = accumulateDx ? { accumulateDx } : {};
      const got = await loraBackwardGpu(device, dy, x, u, a, b, shape, scale, options);
      const want = loraBackward(f64(dy), f64(x), f64(u), f64(a), f64(b), shape, scale, {
        ...(accumulateDx ? { accumulateDx: f64(accumulateDx) } : {}),
      });
      const terms = loraBackward(abs(dy), abs(x), abs(u), abs(a), abs(b), shape, Math.abs(scale), {
        ...(accumulateDx ? { accumulateDx: abs(accumulateDx) } : {}),
      });
      expectWithin('dA', got.dA, want.dA, tolerance(terms.dA, outDim, rows));
      expectWithin('dB', got.dB, want.dB, tolerance(terms.dB, rows, 1));
      expectWithin('dx', got.dx, want.dx, tolerance(terms.dx, outDim, rank));
    }
  });

  it('rejects bad input naming the field', async () => {
    const shape = { rows: 2, inDim: 3, outDim: 4, rank: 2 };
    const x = new Float32Array(6);
    const a = new Float32Array(6);
    const b = new Float32Array(8);
    const y = new Float32Array(8);
    await expect(loraForwardGpu(device, x, a, b, y, shape, NaN)).rejects.toThrow(/scale/);
    await expect(loraForwardGpu(device, x, a.subarray(1), b, y, shape, 1)).rejects.toThrow(
      OpInputError,
    );
    await expect(loraForwardGpu(device, x, a, b, y, { ...shape, rank: 0 }, 1)).rejects.toThrow(
      /rank/,
    );
    // A u buffer smaller than rows × rank is refused before anything is recorded.
    const small = device.storage(4, 'lora test u');
    const big = device.storage(64, 'lora test');
    try {
      const batch = device.beginBatch('lora test');
      const buffers = { x: big, a: big, b: big, y: device.storage(64, 'y'), u: small, t: big };
      const tall = { rows: 1000, inDim: 3, outDim: 4, rank: 8 };
      await expect(encodeLoraForward(device, batch, buffers, tall, 2)).rejects.toThrow(
        /buffers\.u.*rows × rank = 8000/,
      );
      device.pool.release(buffers.y);
    } finally {
      device.pool.release(small);
      device.pool.release(big);
    }
  });
});
