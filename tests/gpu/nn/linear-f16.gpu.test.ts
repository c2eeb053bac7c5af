/**
 * Parity of the linear layer on f16 weights (kernels/nn/linear_f16.wgsl tiled, and
 * kernels/nn/linear_f16_gemv.wgsl for few rows; src/gpu/kernels/nn/linear-f16.ts) with its CPU
 * twin (src/ops/nn/linear-f16.ts); runs in Node (Dawn) and in Chromium.
 *
 * Both sides widen the same halves exactly, so the only difference is summation: f32 on the GPU,
 * float64 rounded once on the CPU. As in linear.gpu.test.ts we allow
 *   tol = 2^-22 · (√K + 1) · max Σ|terms|,
 * with Σ|terms| from the CPU twin on |x| and |W| (the sign bits of the halves cleared).
 */
import { describe, expect, it } from 'vitest';
import {
  encodeLinearF16BackwardInput,
  encodeLinearF16Forward,
  linearF16BackwardInputGpu,
  linearF16ForwardGpu,
  linearF16KernelFor,
} from '../../../src/gpu/kernels/nn/linear-f16';
import { OpInputError } from '../../../src/ops/errors';
import type { LinearShape } from '../../../src/ops/nn/linear';
import { linearF16BackwardInput, linearF16Forward } from '../../../src/ops/nn/linear-f16';
import { packF16 } from '../../../src/ops/nn/unpack-f16';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

const abs = (x: Float32Array) => Float32Array.from(x, Math.abs);
/** |W| on the packed halves: both sign bits of each word cleared. */
const absHalves = (w: Uint32Array) => Uint32Array.from(w, (word) => (word & 0x7fff7fff) >>> 0);

function tol(terms: Float32Array, K: number): number {
  let max = 0;
  for (const t of terms) max = Math.max(max, t);
  return 2 ** -22 * (Math.sqrt(K) + 1) * max;
}

function data(shape: LinearShape, seed: number) {
  const { rows, inDim, outDim } = shape;
  return {
    x: randomLogits(rows * inDim, 1, seed),
    w: packF16(randomLogits(outDim * inDim, 0.5, seed + 1)).packed,
    b: randomLogits(outDim, 0.5, seed + 2),
    dy: randomLogits(rows * outDim, 1, seed + 3),
  };
}

// [rows, inDim, outDim]: rows 1, 3, 64 (GEMV's largest), 300 (tiled); outDim odd and off the
// tiles (64) and the GEMV's 8 outputs per workgroup; inDim past one 16-step, and a word-sized 2.
const SHAPES: [number, number, number][] = [
  [1, 2, 1],
  [1, 576, 37],
  [3, 34, 67],
  [64, 130, 70],
  [300, 48, 9],
  [300, 96, 130],
];

describe.skipIf(!gpu)('linear on f16 weights: GPU vs CPU reference', () => {
  const device = gpu!;

  it('picks GEMV up to 64 rows on hardware, the tiled kernel above and on software, unless told', () => {
    const hardware = { ...device.summary, isFallbackAdapter: false, architecture: 'ampere' };
    const software = { ...device.summary, isFallbackAdapter: true, architecture: 'swiftshader' };
    expect(linearF16KernelFor(hardware, 1)).toBe('gemv');
    expect(linearF16KernelFor(hardware, 64)).toBe('gemv');
    expect(linearF16KernelFor(hardware, 65)).toBe('tiled');
    expect(linearF16KernelFor(software, 1)).toBe('tiled');
    expect(linearF16KernelFor(hardware, 1, 'tiled')).toBe('tiled');
    expect(linearF16KernelFor(software, 300, 'gemv')).toBe('gemv');
    expect(() => linearF16KernelFor(hardware, 1, 'fast' as 'gemv')).toThrow(
      /linearF16Forward: kernel must be one of/,
    );
  });

  it.each(SHAPES)(
    'forward matches on rows=%i inDim=%i outDim=%i, both kernels, bias on and off',
    async (rows, inDim, outDim) => {
      const shape = { rows, inDim, outDim };
      const { x, w, b } = data(shape, rows + inDim + outDim);
      const bound = tol(linearF16Forward(abs(x), absHalves(w), abs(b), shape), inDim);
      for (const kernel of ['gemv', 'tiled'] as const) {
        for (const bias of [b, undefined]) {
          const actual = await linearF16ForwardGpu(device, x, w, bias, shape, { kernel });
          const expected = linearF16Forward(x, w, bias, shape);
          expect(
            maxAbsDiff(actual, expected),
            `${kernel}, bias ${Boolean(bias)}`,
          ).toBeLessThanOrEqual(bound);
        }
      }
    },
  );

  it.each(SHAPES)(
    'dx = dy·W matches on rows=%i inDim=%i outDim=%i',
    async (rows, inDim, outDim) => {
      const shape = { rows, inDim, outDim };
      const { w, dy } = data(shape, 5 * rows + outDim);
      const bound = tol(linearF16BackwardInput(abs(dy), absHalves(w), shape), outDim);
      const actual = await linearF16BackwardInputGpu(device, dy, w, shape);
      expect(maxAbsDiff(actual, linearF16BackwardInput(dy, w, shape))).toBeLessThanOrEqual(bound);
    },
  );

  it('dx adds into accumulate', async () => {
    const shape = { rows: 19, inDim: 22, outDim: 9 };
    const { w, dy } = data(shape, 7);
    const accumulate = randomLogits(19 * 22, 2, 8);
    const expected = linearF16BackwardInput(dy, w, shape, accumulate);
    const actual = await linearF16BackwardInputGpu(device, dy, w, shape, accumulate);
    const terms = linearF16BackwardInput(abs(dy), absHalves(w), shape, abs(accumulate));
    expect(maxAbsDiff(actual, expected)).toBeLessThanOrEqual(tol(terms, 9));
  });

  it('encodes on 256-byte slices of flat buffers: W from a packed parameter buffer', async () => {
    // Two weights packed into one u32 buffer, the second starting at word 64 (256 bytes = 128
    // halves), as a 16-bit parameter group lays them out; activations in another buffer.
    const shape = { rows: 5, inDim: 12, outDim: 7 }; // 84 halves: 42 words, padded to 64
    const { x, w, b, dy } = data(shape, 41);
    const other = packF16(randomLogits(84, 0.5, 42)).packed;
    const params = new Uint32Array(128);
    params.set(other, 0);
    params.set(w, 64);
    const paramBuffer = device.upload(params, 'params');
    const acts = device.storage(4 * 1024, 'activations');
    const out = device.storage(4 * 1024, 'out');
    const put = (offset: number, values: Float32Array): GPUBufferBinding => {
      device.device.queue.writeBuffer(
        acts,
        offset,
        values.buffer,
        values.byteOffset,
        values.byteLength,
      );
      return { buffer: acts, offset, size: values.byteLength };
    };
    try {
      const wSlice = { buffer: paramBuffer, offset: 256, size: w.byteLength };
      const xSlice = put(0, x);
      const bSlice = put(512, b);
      const dySlice = put(1024, dy);
      const ySlice = { buffer: out, offset: 256, size: 4 * 35 };
      const dxSlice = { buffer: out, offset: 1024, size: 4 * 60 };
      for (const kernel of ['gemv', 'tiled'] as const) {
        const batch = device.beginBatch('linearF16 slices');
        await encodeLinearF16Forward(
          device,
          batch,
          { x: xSlice, w: wSlice, b: bSlice, y: ySlice },
          shape,
          { kernel },
        );
        await encodeLinearF16BackwardInput(
          device,
          batch,
          { dy: dySlice, w: wSlice, dx: dxSlice },
          shape,
        );
        batch.submit();
        const all = await device.readF32(out, 1024);
        const y = all.subarray(64, 64 + 35);
        const dx = all.subarray(256, 256 + 60);
        expect(maxAbsDiff(y, linearF16Forward(x, w, b, shape)), kernel).toBeLessThan(1e-5);
        expect(maxAbsDiff(dx, linearF16BackwardInput(dy, w, shape)), kernel).toBeLessThan(1e-5);
      }
    } finally {
      for (const buffer of [paramBuffer, acts, out]) device.pool.release(buffer);
    }
  });

  it('rejects bad input before any dispatch, naming the field', async () => {
    const created = device.pool.stats().created;
    const odd = { rows: 1, inDim: 3, outDim: 2 };
    await expect(
      linearF16ForwardGpu(device, new Float32Array(3), new Uint32Array(3), undefined, odd),
    ).rejects.toThrow(/linearF16Forward: inDim must be even/);
    const shape = { rows: 2, inDim: 4, outDim: 3 };
    await expect(
      linearF16ForwardGpu(device, new Float32Array(8), new Uint32Array(5), undefined, shape),
    ).rejects.toThrow(/w must have outDim × inDim \/ 2 words = 6/);
    await expect(
      linearF16ForwardGpu(device, new Float32Array(8), new Uint32Array(6), undefined, shape, {
        kernel: 'fast' as 'gemv',
      }),
    ).rejects.toThrow(OpInputError);
    await expect(
      linearF16BackwardInputGpu(
        device,
        new Float32Array(6),
        new Uint32Array(6),
        shape,
        new Float32Array(7),
      ),
    ).rejects.toThrow(/accumulate must have rows × inDim = 8/);
    expect(device.pool.stats().created).toBe(created);
  });

  it('refuses a binding too small for W, naming it', async () => {
    const shape = { rows: 2, inDim: 4, outDim: 3 };
    const flat = device.storage(4 * 256, 'linearF16 bad bindings');
    const out = device.storage(4 * 256, 'linearF16 bad bindings out');
    try {
      const batch = device.beginBatch('linearF16 bad bindings');
      const x = { buffer: flat, offset: 0, size: 32 };
      const w = { buffer: flat, offset: 256, size: 16 }; // 4 words; W needs 6
      const y = { buffer: out, offset: 0, size: 24 };
      await expect(encodeLinearF16Forward(device, batch, { x, w, y }, shape)).rejects.toThrow(
        /linearF16Forward: buffers\.w must bind at least 6 f32 \(24 bytes\), got 16 bytes/,
      );
      await expect(
        encodeLinearF16BackwardInput(device, batch, { dy: y, w, dx: x }, shape),
      ).rejects.toThrow(/linearF16BackwardInput: buffers\.w must bind at least 6/);
      batch.submit(); // nothing was recorded
    } finally {
      for (const buffer of [flat, out]) device.pool.release(buffer);
    }
  });
});
