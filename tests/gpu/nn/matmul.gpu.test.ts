/**
 * Parity of kernels/nn/matmul.wgsl and kernels/nn/matmul_column_sums.wgsl with their CPU twins
 * (src/ops/nn/matmul.ts); runs in Node (Dawn) and in Chromium.
 *
 * Tolerance. The CPU twin sums in float64 and rounds once; the kernel sums k products in f32, in
 * order along k. Recursive summation of k terms has error ≤ k·u·Σ|terms| in the worst case and
 * ~√k·u·Σ|terms| typically (Higham, u = 2^-24), where Σ|terms| = Σ_p |a_ip|·|b_pj| (+ |bias| +
 * |accumulate|). We allow 4× the typical bound plus one rounding of the result:
 *   tol = 2^-22 · (√k + 1) · max_ij Σ|terms|_ij,
 * with Σ|terms| computed by the CPU twin on |A|, |B|, |bias|, |accumulate| (for uniform data in
 * [−1, 1) that is ≈ 2^-22·√k·k/4, i.e. "√k · max|a| · max|b| · 2^-23" times k/8).
 */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../../src/gpu/context';
import {
  columnSumsGpu,
  encodeColumnSums,
  encodeMatmul,
  matmulGpu,
} from '../../../src/gpu/kernels/nn/matmul';
import { OpInputError } from '../../../src/ops/errors';
import { columnSums, matmul, type MatmulShape } from '../../../src/ops/nn/matmul';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../../support/random';

const gpu = await testGpu();

const abs = (x: Float32Array) => new Float64Array(Array.from(x, Math.abs));

/** The tolerance above for one product. */
function matmulTolerance(
  a: Float32Array,
  b: Float32Array,
  shape: MatmulShape,
  options: { bias?: Float32Array; accumulate?: Float32Array },
): number {
  const terms = matmul(abs(a), abs(b), shape, {
    ...(options.bias ? { bias: abs(options.bias) } : {}),
    ...(options.accumulate ? { accumulate: abs(options.accumulate) } : {}),
  });
  return 2 ** -22 * (Math.sqrt(shape.k) + 1) * Math.max(...terms);
}

/** Stored sizes of A and B for a shape (A: m×k or k×m, B: k×n or n×k have the same counts). */
function operands(shape: MatmulShape, seed: number) {
  return {
    a: randomLogits(shape.m * shape.k, 1, seed),
    b: randomLogits(shape.k * shape.n, 1, seed + 1),
  };
}

const COMBOS = [
  [false, false],
  [true, false],
  [false, true],
  [true, true],
] as const;

/** Writes `data` at a byte offset of `buffer` and returns the binding of that slice. */
function slice(
  device: GpuContext,
  buffer: GPUBuffer,
  offset: number,
  data: Float32Array,
): GPUBufferBinding {
  device.device.queue.writeBuffer(buffer, offset, data.buffer, data.byteOffset, data.byteLength);
  return { buffer, offset, size: data.byteLength };
}

describe.skipIf(!gpu)('matmul kernel vs CPU reference', () => {
  const device = gpu!;

  it.each(
    [
      [1, 1, 1],
      [3, 5, 7],
      [17, 33, 65],
      [64, 256, 64],
      [130, 70, 200],
    ].flatMap(([m, k, n]) =>
      COMBOS.map(([transA, transB]): [number, number, number, boolean, boolean] => [
        m!,
        k!,
        n!,
        transA,
        transB,
      ]),
    ),
  )('matches on m=%i k=%i n=%i (transA %s, transB %s)', async (m, k, n, transA, transB) => {
    const shape = { m, k, n, transA, transB };
    const { a, b } = operands(shape, m * 7 + k * 3 + n);
    const expected = matmul(a, b, shape);
    const actual = await matmulGpu(device, a, b, shape);
    expect(maxAbsDiff(actual, expected)).toBeLessThanOrEqual(matmulTolerance(a, b, shape, {}));
  });

  it('adds bias and accumulates, in every transpose combination', async () => {
    for (const [transA, transB] of COMBOS) {
      const shape = { m: 37, k: 19, n: 70, transA, transB };
      const { a, b } = operands(shape, 11);
      const options = { bias: randomLogits(70, 2, 12), accumulate: randomLogits(37 * 70, 3, 13) };
      const expected = matmul(a, b, shape, options);
      const actual = await matmulGpu(device, a, b, shape, options);
      expect(maxAbsDiff(actual, expected), `${transA} ${transB}`).toBeLessThanOrEqual(
        matmulTolerance(a, b, shape, options),
      );
    }
  });

  it('matches on 8 random shapes with random options (seeded)', async () => {
    const next = seededRandom(77);
    const dim = () => 1 + Math.floor(next() * 150);
    for (let trial = 0; trial < 8; trial++) {
      const shape = { m: dim(), k: dim(), n: dim(), transA: next() < 0.5, transB: next() < 0.5 };
      const { a, b } = operands(shape, 100 + trial);
      const options = {
        ...(next() < 0.5 ? { bias: randomLogits(shape.n, 1, trial) } : {}),
        ...(next() < 0.5 ? { accumulate: randomLogits(shape.m * shape.n, 1, trial + 50) } : {}),
      };
      const diff = maxAbsDiff(
        await matmulGpu(device, a, b, shape, options),
        matmul(a, b, shape, options),
      );
      expect(diff, JSON.stringify(shape)).toBeLessThanOrEqual(
        matmulTolerance(a, b, shape, options),
      );
    }
  });

  it('stays within tolerance at k = 4096 (the dW product of a 4096-token step)', async () => {
    const shape = { m: 8, k: 4096, n: 24, transA: true };
    const { a, b } = operands(shape, 5);
    const tol = matmulTolerance(a, b, shape, {});
    const diff = maxAbsDiff(await matmulGpu(device, a, b, shape), matmul(a, b, shape));
    expect(diff).toBeLessThanOrEqual(tol);
  });

  it('binds slices of flat buffers at 256-byte-aligned offsets', async () => {
    const shape = { m: 33, k: 20, n: 45, transB: true };
    const { a, b } = operands(shape, 21);
    const bias = randomLogits(45, 1, 22);
    const accumulate = randomLogits(33 * 45, 1, 23);
    // Inputs in one flat buffer (like the parameters), the output in another (like the
    // gradients): WebGPU forbids one buffer bound writable and read-only in one dispatch.
    const inputs = device.storage(4 * 2048, 'matmul input slices');
    const outputs = device.storage(4 * 4096, 'matmul output slices');
    try {
      // −7 everywhere first: what lies around the output slice must stay −7.
      slice(device, outputs, 0, new Float32Array(4096).fill(-7));
      const buffers = {
        a: slice(device, inputs, 256, a), // 660 floats: bytes 256–2896
        b: slice(device, inputs, 3072, b), // 900 floats: bytes 3072–6672
        bias: slice(device, inputs, 6912, bias), // 45 floats: bytes 6912–7092
        out: slice(device, outputs, 1024, accumulate), // 1485 floats: bytes 1024–6964
      };
      const batch = device.beginBatch('matmul slices');
      await encodeMatmul(device, batch, buffers, shape, { accumulate: true });
      batch.submit();
      const all = await device.readF32(outputs, 4096);
      const actual = all.slice(256, 256 + 33 * 45);
      const options = { bias, accumulate };
      expect(maxAbsDiff(actual, matmul(a, b, shape, options))).toBeLessThanOrEqual(
        matmulTolerance(a, b, shape, options),
      );
      // Nothing outside the output slice was written.
      expect(all.slice(0, 256).every((v) => v === -7)).toBe(true);
      expect(all.slice(256 + 33 * 45).every((v) => v === -7)).toBe(true);
    } finally {
      device.pool.release(inputs);
      device.pool.release(outputs);
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const shape = { m: 2, k: 3, n: 2 };
    await expect(
      matmulGpu(device, new Float32Array(5), new Float32Array(6), shape),
    ).rejects.toThrow(/a must have m × k = 6 elements, got 5/);
    await expect(
      matmulGpu(device, new Float32Array(1), new Float32Array(1), { m: 1, k: 0, n: 1 }),
    ).rejects.toThrow(OpInputError);
    expect(device.pool.stats().created).toBe(created);
  });

  it('rejects too-small bindings and an output sharing a buffer with an input', async () => {
    const flat = device.storage(4 * 256, 'matmul bad bindings');
    const other = device.storage(4 * 256, 'matmul bad bindings out');
    try {
      const batch = device.beginBatch('matmul bad bindings');
      const shape = { m: 4, k: 4, n: 4 };
      const a = { buffer: flat, offset: 0, size: 64 };
      const b = { buffer: flat, offset: 256, size: 64 };
      await expect(
        encodeMatmul(device, batch, { a, b, out: { buffer: other, offset: 256, size: 32 } }, shape),
      ).rejects.toThrow(/buffers.out must bind at least 16 f32 \(64 bytes\), got 32 bytes/);
      await expect(
        encodeMatmul(device, batch, { a, b, out: { buffer: flat, offset: 512, size: 64 } }, shape),
      ).rejects.toThrow(/buffers.out must be in a different GPUBuffer than buffers.a/);
      batch.submit(); // nothing was recorded
    } finally {
      device.pool.release(flat);
      device.pool.release(other);
    }
  });
});

describe.skipIf(!gpu)('matmul_column_sums kernel vs CPU reference', () => {
  const device = gpu!;

  /** Same reasoning as matmul with k = rows and |b| = 1. */
  function tolerance(x: Float32Array, rows: number, cols: number, acc?: Float32Array): number {
    const terms = columnSums(abs(x), rows, cols, acc && abs(acc));
    return 2 ** -22 * (Math.sqrt(rows) + 1) * Math.max(...terms);
  }

  it.each([
    [1, 1],
    [1, 33],
    [7, 1],
    [9, 31],
    [64, 64],
    [300, 77],
    [4096, 40],
  ])('matches on %i × %i, with and without accumulate', async (rows, cols) => {
    const x = randomLogits(rows * cols, 1, rows + cols);
    const diff = maxAbsDiff(await columnSumsGpu(device, x, rows, cols), columnSums(x, rows, cols));
    expect(diff).toBeLessThanOrEqual(tolerance(x, rows, cols));
    const acc = randomLogits(cols, 4, 9);
    const diffAcc = maxAbsDiff(
      await columnSumsGpu(device, x, rows, cols, acc),
      columnSums(x, rows, cols, acc),
    );
    expect(diffAcc).toBeLessThanOrEqual(tolerance(x, rows, cols, acc));
  });

  it('is deterministic (bit-identical across runs)', async () => {
    const x = randomLogits(2000 * 50, 1, 3);
    const first = await columnSumsGpu(device, x, 2000, 50);
    const second = await columnSumsGpu(device, x, 2000, 50);
    expect(Array.from(second)).toEqual(Array.from(first));
  });

  it('binds slices at 256-byte-aligned offsets and accumulates into the output slice', async () => {
    const rows = 45;
    const cols = 70;
    const x = randomLogits(rows * cols, 1, 8);
    const acc = randomLogits(cols, 1, 9);
    const inputs = device.storage(4 * 4096, 'column sums input slices');
    const outputs = device.storage(4 * 1024, 'column sums output slices');
    try {
      const buffers = { x: slice(device, inputs, 512, x), out: slice(device, outputs, 2048, acc) };
      const batch = device.beginBatch('column sums slices');
      await encodeColumnSums(device, batch, buffers, rows, cols, { accumulate: true });
      batch.submit();
      const actual = (await device.readF32(outputs, 1024)).slice(2048 / 4, 2048 / 4 + cols);
      expect(maxAbsDiff(actual, columnSums(x, rows, cols, acc))).toBeLessThanOrEqual(
        tolerance(x, rows, cols, acc),
      );
    } finally {
      device.pool.release(inputs);
      device.pool.release(outputs);
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const created = device.pool.stats().created;
    await expect(columnSumsGpu(device, new Float32Array(5), 2, 3)).rejects.toThrow(
      /x must have rows × cols = 2 × 3 = 6 elements, got 5/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
