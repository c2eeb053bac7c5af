/**
 * A weight split by rows into parts (a vocabulary larger than one buffer binding) runs part by
 * part: the embedding kernels gather only the tokens a part holds (`part`), the products write or
 * read the part's columns of a wider matrix (`outWindow`, `yWindow`, `aWindow`, `dyWindow`;
 * kernels/nn/matmul.wgsl, linear_f16.wgsl, linear_f16_gemv.wgsl, embedding_forward.wgsl,
 * embedding_f16.wgsl). Runs in Node (Dawn) and in Chromium.
 *
 * The forward kernels do the same arithmetic on a window as on a whole matrix, so the parts put
 * together must equal the unsplit dispatch bit for bit, and before the last part runs its columns
 * must still hold what was there. The input gradient adds the parts' shares (a different order of
 * summation): it is checked against the float64 CPU twin on the whole matrix.
 */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../../src/gpu/context';
import { encodeEmbeddingForward } from '../../../src/gpu/kernels/nn/embedding';
import { encodeEmbeddingF16 } from '../../../src/gpu/kernels/nn/embedding-f16';
import { encodeLinearForward } from '../../../src/gpu/kernels/nn/linear';
import {
  encodeLinearF16BackwardInput,
  encodeLinearF16Forward,
} from '../../../src/gpu/kernels/nn/linear-f16';
import { encodeMatmul } from '../../../src/gpu/kernels/nn/matmul';
import { OpInputError } from '../../../src/ops/errors';
import { linearMatmulShapes } from '../../../src/ops/nn/linear';
import { linearF16BackwardInput } from '../../../src/ops/nn/linear-f16';
import { matmul } from '../../../src/ops/nn/matmul';
import { packF16 } from '../../../src/ops/nn/unpack-f16';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();
const SENTINEL = -7.25;

/** Row ranges [start, end) of `rows` rows in parts of `per` (the last one shorter). */
function partsOf(rows: number, per: number): [number, number][] {
  const parts: [number, number][] = [];
  for (let s = 0; s < rows; s += per) parts.push([s, Math.min(rows, s + per)]);
  return parts;
}

async function run(
  device: GpuContext,
  out: GPUBuffer,
  length: number,
  record: (batch: ReturnType<GpuContext['beginBatch']>) => Promise<void>,
): Promise<Float32Array> {
  const batch = device.beginBatch('column window test');
  await record(batch);
  batch.submit();
  return device.readF32(out, length);
}

describe.skipIf(!gpu)('weights split by rows: column windows and table parts', () => {
  const device = gpu!;

  // rows × inDim input, W (outDim, inDim) split into parts of 7 rows (outDim 30: 5 parts, the
  // last of 2); 70 rows spans two 64-row tiles.
  const [rows, inDim, outDim, per] = [70, 36, 30, 7];
  const x = randomLogits(rows * inDim, 1, 11);
  const w32 = randomLogits(outDim * inDim, 0.5, 12);
  const w16 = packF16(w32).packed;
  const bias = randomLogits(outDim, 0.5, 13);
  const parts = partsOf(outDim, per);

  /** The forward into a sentinel-filled (rows, outDim) buffer: whole, or part by part. */
  async function forward(
    storage: 'f32' | 'f16',
    kernel: 'tiled' | 'gemv',
    useRows: number,
    skipLast = false,
  ): Promise<Float32Array> {
    const xBuffer = device.upload(x, 'x');
    const bBuffer = device.upload(bias, 'b');
    const y = device.upload(new Float32Array(useRows * outDim).fill(SENTINEL), 'y');
    const owned = [xBuffer, bBuffer, y];
    try {
      return await run(device, y, useRows * outDim, async (batch) => {
        const ranges = skipLast ? parts.slice(0, -1) : parts;
        for (const [start, end] of ranges) {
          const part =
            storage === 'f16'
              ? w16.subarray((start * inDim) / 2, (end * inDim) / 2)
              : w32.subarray(start * inDim, end * inDim);
          const w = device.upload(part, 'w part');
          owned.push(w);
          const shape = { rows: useRows, inDim, outDim: end - start };
          const yWindow = { stride: outDim, col: start };
          const buffers = { x: xBuffer, w, b: bBuffer, y };
          if (storage === 'f16') {
            await encodeLinearF16Forward(device, batch, buffers, shape, { kernel, yWindow });
          } else {
            await encodeLinearForward(device, batch, buffers, shape, { yWindow });
          }
        }
      });
    } finally {
      owned.forEach((b) => device.pool.release(b));
    }
  }

  async function whole(storage: 'f32' | 'f16', kernel: 'tiled' | 'gemv', useRows: number) {
    const buffers = {
      x: device.upload(x, 'x'),
      w: device.upload(storage === 'f16' ? w16 : w32, 'w'),
      b: device.upload(bias, 'b'),
      y: device.storage(useRows * outDim * 4, 'y'),
    };
    try {
      return await run(device, buffers.y, useRows * outDim, async (batch) => {
        const shape = { rows: useRows, inDim, outDim };
        if (storage === 'f16')
          await encodeLinearF16Forward(device, batch, buffers, shape, { kernel });
        else await encodeLinearForward(device, batch, buffers, shape);
      });
    } finally {
      Object.values(buffers).forEach((b) => device.pool.release(b));
    }
  }

  it.each([
    ['f32', 'tiled', rows],
    ['f16', 'tiled', rows],
    ['f16', 'gemv', 3],
  ] as const)(
    'forward, %s weights (%s, %i rows): parts write their columns, bit for bit the whole',
    async (storage, kernel, useRows) => {
      const expected = await whole(storage, kernel, useRows);
      expect(Array.from(await forward(storage, kernel, useRows))).toEqual(Array.from(expected));
      // Without the last part, its columns still hold the sentinel and the others are written.
      const partial = await forward(storage, kernel, useRows, true);
      const [lastStart] = parts[parts.length - 1]!;
      for (let r = 0; r < useRows; r++) {
        for (let c = 0; c < outDim; c++) {
          const i = r * outDim + c;
          expect(partial[i], `row ${r} col ${c}`).toBe(c >= lastStart ? SENTINEL : expected[i]);
        }
      }
    },
  );

  it.each(['f32', 'f16'] as const)(
    'input gradient, %s weights: the parts’ shares of dy·W add up to the whole',
    async (storage) => {
      const dy = randomLogits(rows * outDim, 1, 14);
      const start = randomLogits(rows * inDim, 1, 15);
      const shape = { rows, inDim, outDim };
      // The CPU twin on the whole W, added to what dx held (as the first part is told to).
      const want =
        storage === 'f16'
          ? linearF16BackwardInput(dy, w16, shape, start)
          : matmul(dy, w32, linearMatmulShapes(shape).dx, { accumulate: start });
      const dyBuffer = device.upload(dy, 'dy');
      const dx = device.upload(start, 'dx');
      const owned = [dyBuffer, dx];
      try {
        const got = await run(device, dx, rows * inDim, async (batch) => {
          for (const [s, e] of parts) {
            const partShape = { rows, inDim, outDim: e - s };
            const window = { stride: outDim, col: s };
            if (storage === 'f16') {
              const w = device.upload(w16.subarray((s * inDim) / 2, (e * inDim) / 2), 'w part');
              owned.push(w);
              await encodeLinearF16BackwardInput(
                device,
                batch,
                { dy: dyBuffer, w, dx },
                partShape,
                {
                  accumulate: true,
                  dyWindow: window,
                },
              );
            } else {
              const w = device.upload(w32.subarray(s * inDim, e * inDim), 'w part');
              owned.push(w);
              await encodeMatmul(
                device,
                batch,
                { a: dyBuffer, b: w, out: dx },
                linearMatmulShapes(partShape).dx,
                { accumulate: true, aWindow: window },
              );
            }
          }
        });
        let scale = 0;
        for (const v of want) scale = Math.max(scale, Math.abs(v));
        expect(maxAbsDiff(got, want)).toBeLessThan(1e-6 * scale * Math.sqrt(outDim));
      } finally {
        owned.forEach((b) => device.pool.release(b));
      }
    },
  );

  it.each(['f32', 'f16'] as const)(
    'embedding, %s table: parts write the rows of their tokens, bit for bit the whole',
    async (storage) => {
      const [V, C] = [45, 8];
      const table = randomLogits(V * C, 1, 16);
      const packed = packF16(table).packed;
      // Ids in every part, at both ends of parts, and one past the vocabulary (a zero row).
      const tokens = Int32Array.from([0, 44, 9, 10, 19, 20, 33, 45, 5, 44]);
      const N = tokens.length;
      const gather = async (ranges: [number, number][] | undefined) => {
        const t = device.upload(tokens, 'tokens');
        const x = device.upload(new Float32Array(N * C).fill(SENTINEL), 'x');
        const owned = [t, x];
        try {
          return await run(device, x, N * C, async (batch) => {
            for (const [s, e] of ranges ?? [[0, V]]) {
              const part = ranges ? { rowStart: s, rows: e - s } : undefined;
              const wte = device.upload(
                storage === 'f16'
                  ? packed.subarray((s * C) / 2, (e * C) / 2)
                  : table.subarray(s * C, e * C),
                'wte part',
              );
              owned.push(wte);
              const buffers = { tokens: t, wte, x };
              if (storage === 'f16') {
                await encodeEmbeddingF16(
                  device,
                  batch,
                  buffers,
                  { rows: N, channels: C, vocab: V },
                  part,
                );
              } else {
                const shape = { batch: 1, seq: N, maxSeq: N, channels: C, vocab: V };
                await encodeEmbeddingForward(device, batch, buffers, shape, 0, part);
              }
            }
          });
        } finally {
          owned.forEach((b) => device.pool.release(b));
        }
      };
      const expected = await gather(undefined);
      const ranges = partsOf(V, 10);
      expect(Array.from(await gather(ranges))).toEqual(Array.from(expected));
      // Only the part holding rows 10…19: tokens 10 and 19 written, 45 zeroed, the rest untouched.
      const one = await gather([[10, 20]]);
      tokens.forEach((token, n) => {
        const row = Array.from(one.subarray(n * C, (n + 1) * C));
        const want =
          token >= 10 && token < 20 ? Array.from(expected.subarray(n * C, (n + 1) * C)) : undefined;
        if (want) expect(row, `token ${token}`).toEqual(want);
        else if (token >= V) expect(row, `token ${token}`).toEqual(new Array(C).fill(0));
        else expect(row, `token ${token}`).toEqual(new Array(C).fill(SENTINEL));
      });
    },
  );

  it('refuses a window or a part that does not fit, naming the field and the range', async () => {
    const batch = device.beginBatch('refusals');
    const buffers = {
      x: device.upload(x, 'x'),
      w: device.upload(w16.subarray(0, (per * inDim) / 2), 'w'),
      y: device.storage(rows * outDim * 4, 'y'),
      tokens: device.upload(Int32Array.from([1, 2]), 'tokens'),
      wte: device.upload(new Float32Array(10 * 4), 'wte'),
      xe: device.storage(2 * 4 * 4, 'x embed'),
    };
    try {
      const shape = { rows, inDim, outDim: per };
      // The window's columns run past its stride.
      await expect(
        encodeLinearF16Forward(device, batch, buffers, shape, { yWindow: { stride: 30, col: 24 } }),
      ).rejects.toThrow(/linearF16Forward: yWindow\.stride must be an integer in \[31,/);
      await expect(
        encodeLinearF16Forward(device, batch, buffers, shape, { yWindow: { stride: 30, col: -1 } }),
      ).rejects.toThrow(OpInputError);
      // A y binding too small for (rows − 1) × stride + outDim = 69 × 40 + 7 elements.
      await expect(
        encodeLinearF16Forward(device, batch, buffers, shape, { yWindow: { stride: 40, col: 0 } }),
      ).rejects.toThrow(/linearF16Forward: buffers\.y must bind at least 2767 f32/);
      // A part past the vocabulary.
      const embedShape = { batch: 1, seq: 2, maxSeq: 2, channels: 4, vocab: 12 };
      const embedBuffers = { tokens: buffers.tokens, wte: buffers.wte, x: buffers.xe };
      await expect(
        encodeEmbeddingForward(device, batch, embedBuffers, embedShape, 0, {
          rowStart: 5,
          rows: 10,
        }),
      ).rejects.toThrow(/embeddingForward: part\.rows must be an integer in \[1, 7\], got 10/);
    } finally {
      batch.submit();
      Object.values(buffers).forEach((b) => device.pool.release(b));
    }
  });
});
