/**
 * Parity of the GPU linear layer (src/gpu/kernels/nn/linear.ts: matmul + column sums) with its CPU
 * twin (src/ops/nn/linear.ts); runs in Node (Dawn) and in Chromium.
 *
 * Tolerance: each output is a sum of K products (K = inDim for y, outDim for dx, rows for dW and
 * db) summed in f32 on the GPU and in float64 on the CPU. As in matmul.gpu.test.ts we allow
 *   tol = 2^-22 · (√K + 1) · max Σ|terms|,
 * 4× the typical √K·u·Σ|terms| error of f32 recursive summation plus one rounding (u = 2^-24),
 * with Σ|terms| computed by the CPU twin on absolute values.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeLinearBackward,
  encodeLinearForward,
  linearBackwardGpu,
  linearForwardGpu,
} from '../../../src/gpu/kernels/nn/linear';
import { OpInputError } from '../../../src/ops/errors';
import { linearBackward, linearForward, type LinearShape } from '../../../src/ops/nn/linear';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

const abs = (x: Float32Array) => new Float64Array(Array.from(x, Math.abs));

/** The tolerance above for a result whose absolute-value twin is `terms`, summed over K. */
function tol(terms: Float64Array, K: number): number {
  return 2 ** -22 * (Math.sqrt(K) + 1) * Math.max(...terms);
}

function data(shape: LinearShape, seed: number) {
  const { rows, inDim, outDim } = shape;
  return {
    x: randomLogits(rows * inDim, 1, seed),
    w: randomLogits(outDim * inDim, 0.5, seed + 1),
    b: randomLogits(outDim, 0.5, seed + 2),
    dy: randomLogits(rows * outDim, 1, seed + 3),
  };
}

describe.skipIf(!gpu)('linear layer on the GPU vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1, 1],
    [5, 3, 7],
    [33, 17, 65],
    [130, 70, 48],
  ])('forward matches on rows=%i inDim=%i outDim=%i', async (rows, inDim, outDim) => {
    const shape = { rows, inDim, outDim };
    const { x, w, b } = data(shape, rows + inDim + outDim);
    const bound = tol(linearForward(abs(x), abs(w), abs(b), shape), inDim);
    expect(
      maxAbsDiff(await linearForwardGpu(device, x, w, b, shape), linearForward(x, w, b, shape)),
    ).toBeLessThanOrEqual(bound);
    expect(
      maxAbsDiff(
        await linearForwardGpu(device, x, w, undefined, shape),
        linearForward(x, w, undefined, shape),
      ),
    ).toBeLessThanOrEqual(bound);
  });

  it.each([
    [1, 1, 1, true],
    [5, 3, 7, false],
    [33, 17, 65, true],
    [200, 40, 24, true],
  ])(
    'backward matches on rows=%i inDim=%i outDim=%i (bias %s)',
    async (rows, inDim, outDim, hasBias) => {
      const shape = { rows, inDim, outDim };
      const { x, w, dy } = data(shape, rows * 3 + inDim);
      const expected = linearBackward(dy, x, w, shape, { hasBias });
      const actual = await linearBackwardGpu(device, dy, x, w, shape, { hasBias });
      const terms = linearBackward(abs(dy), abs(x), abs(w), shape);
      expect(maxAbsDiff(actual.dx, expected.dx)).toBeLessThanOrEqual(tol(terms.dx, outDim));
      expect(maxAbsDiff(actual.dw, expected.dw)).toBeLessThanOrEqual(tol(terms.dw, rows));
      if (hasBias) {
        expect(maxAbsDiff(actual.db!, expected.db!)).toBeLessThanOrEqual(tol(terms.db!, rows));
      } else {
        expect(actual.db).toBeUndefined();
      }
    },
  );

  it('backward adds dW into accumulateDw', async () => {
    const shape = { rows: 19, inDim: 21, outDim: 9 };
    const { x, w, dy } = data(shape, 7);
    const accumulateDw = randomLogits(9 * 21, 2, 8);
    const expected = linearBackward(dy, x, w, shape, { accumulateDw });
    const actual = await linearBackwardGpu(device, dy, x, w, shape, { accumulateDw });
    const terms = linearBackward(abs(dy), abs(x), abs(w), shape, {
      accumulateDw: abs(accumulateDw),
    });
    expect(maxAbsDiff(actual.dw, expected.dw)).toBeLessThanOrEqual(tol(terms.dw, 19));
  });

  it('encodes on slices of flat buffers: forward, then backward with accumulateDx and no dx', async () => {
    // Parameters (w, b) in one flat buffer, activations (x, y) in another, gradients (dw, db) in
    // a third, activation gradients (dy, dx) in two more — every tensor at a 256-byte multiple.
    // An output may not share a GPUBuffer with an input of the same dispatch (WebGPU usage rule).
    const shape = { rows: 37, inDim: 24, outDim: 20 };
    const { x, w, b, dy } = data(shape, 31);
    const dxOld = randomLogits(37 * 24, 1, 35);
    const params = device.storage(4 * 1024, 'params');
    const acts = device.storage(4 * 2048, 'activations');
    const grads = device.storage(4 * 1024, 'grads');
    const dyBuffer = device.storage(4 * 1024, 'dy');
    const dxBuffer = device.storage(4 * 2048, 'dx');
    const put = (buffer: GPUBuffer, offset: number, values: Float32Array): GPUBufferBinding => {
      device.device.queue.writeBuffer(
        buffer,
        offset,
        values.buffer,
        values.byteOffset,
        values.byteLength,
      );
      return { buffer, offset, size: values.byteLength };
    };
    try {
      const wRef = put(params, 256, w); // 480 floats: bytes 256–2176
      const bRef = put(params, 2304, b);
      const xRef = put(acts, 0, x); // 888 floats: bytes 0–3552
      const yRef = { buffer: acts, offset: 3584, size: 37 * 20 * 4 };
      const dyRef = put(dyBuffer, 256, dy);
      const dxRef = put(dxBuffer, 512, dxOld);
      const dwRef = { buffer: grads, offset: 256, size: 20 * 24 * 4 };
      const dbRef = { buffer: grads, offset: 2304, size: 20 * 4 };

      const batch = device.beginBatch('linear slices');
      // y may not go into `acts` beside x: forward would bind that buffer read-only (x) and
      // writable (y) in one dispatch. It is rejected before recording; y goes to dxBuffer.
      await expect(
        encodeLinearForward(device, batch, { x: xRef, w: wRef, b: bRef, y: yRef }, shape),
      ).rejects.toThrow(/buffers.out must be in a different GPUBuffer than buffers.a/);
      const yOut = { buffer: dxBuffer, offset: 4096, size: 37 * 20 * 4 }; // bytes 4096–7056
      await encodeLinearForward(device, batch, { x: xRef, w: wRef, b: bRef, y: yOut }, shape);
      await encodeLinearBackward(
        device,
        batch,
        { dy: dyRef, x: xRef, w: wRef, dx: dxRef, dw: dwRef, db: dbRef },
        shape,
        { accumulateDx: true },
      );
      // The first layer of a network needs no dx: only dW and db (accumulated a second time).
      await encodeLinearBackward(device, batch, { dy: dyRef, x: xRef, w: wRef, dw: dwRef }, shape, {
        accumulateDw: true,
      });
      batch.submit();
      const [gradsOut, dxOut] = await Promise.all([
        device.readF32(grads, 1024),
        device.readF32(dxBuffer, 2048),
      ]);

      const y = dxOut.slice(1024, 1024 + 37 * 20);
      const yTerms = linearForward(abs(x), abs(w), abs(b), shape);
      expect(maxAbsDiff(y, linearForward(x, w, b, shape))).toBeLessThanOrEqual(tol(yTerms, 24));

      const once = linearBackward(dy, x, w, shape);
      const terms = linearBackward(abs(dy), abs(x), abs(w), shape, {
        accumulateDw: linearBackward(abs(dy), abs(x), abs(w), shape).dw,
      });
      const dx = dxOut.slice(128, 128 + 37 * 24);
      const dxExpected = once.dx.map((v, i) => v + dxOld[i]!);
      expect(maxAbsDiff(dx, dxExpected)).toBeLessThanOrEqual(
        tol(
          terms.dx.map((v, i) => v + Math.abs(dxOld[i]!)),
          20,
        ),
      );
      const dw = gradsOut.slice(64, 64 + 20 * 24);
      const dwTwice = linearBackward(dy, x, w, shape, { accumulateDw: once.dw }).dw;
      expect(maxAbsDiff(dw, dwTwice)).toBeLessThanOrEqual(tol(terms.dw, 37));
      const db = gradsOut.slice(576, 576 + 20);
      expect(maxAbsDiff(db, once.db!)).toBeLessThanOrEqual(tol(terms.db!, 37));
    } finally {
      for (const buffer of [params, acts, grads, dyBuffer, dxBuffer]) device.pool.release(buffer);
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const shape = { rows: 2, inDim: 2, outDim: 3 };
    const f = (n: number) => new Float32Array(n);
    await expect(linearForwardGpu(device, f(4), f(5), undefined, shape)).rejects.toThrow(
      /w must have outDim × inDim = 6 elements, got 5/,
    );
    await expect(
      linearBackwardGpu(device, f(6), f(4), f(6), shape, { accumulateDw: f(2) }),
    ).rejects.toThrow(OpInputError);
    await expect(
      linearForwardGpu(device, f(4), f(6), undefined, { rows: 2, inDim: 0, outDim: 3 }),
    ).rejects.toThrow(/inDim must be an integer in \[1, 1048576\], got 0/);
    expect(device.pool.stats().created).toBe(created);
  });
});
