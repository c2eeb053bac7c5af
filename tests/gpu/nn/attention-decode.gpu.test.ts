/**
 * Parity of kernels/nn/attention_decode.wgsl with its CPU twin (src/ops/nn/attention-decode.ts) and
 * with the forward, decoding every position of a sequence; runs in Node (Dawn) and in Chromium.
 *
 * Tolerance: 2e-5 absolute, as for the forward (f32 accumulation of ≤ 256-term dot products and a
 * softmax over ≤ 256 positions, inputs uniform in [−2, 2)). Cache entries are copies: exact.
 */
import { describe, expect, it } from 'vitest';
import {
  attentionDecodeGpu,
  encodeAttentionDecode,
} from '../../../src/gpu/kernels/nn/attention-decode';
import { OpInputError } from '../../../src/ops/errors';
import { attentionForward } from '../../../src/ops/nn/attention';
import { type DecodeShape, attentionDecode } from '../../../src/ops/nn/attention-decode';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

/** Row `pos` of every sequence of qkv (B, T, 3C): the decode step input (B, 3C). */
function stepOf(qkv: Float32Array, B: number, T: number, C: number, pos: number): Float32Array {
  const step = new Float32Array(B * 3 * C);
  for (let b = 0; b < B; b++) {
    step.set(qkv.subarray((b * T + pos) * 3 * C, (b * T + pos + 1) * 3 * C), b * 3 * C);
  }
  return step;
}

describe.skipIf(!gpu)('attention_decode kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [2, 5, 2, 8, 6],
    [3, 4, 1, 7, 4],
    [1, 3, 8, 64, 3],
    [2, 3, 16, 48, 5],
  ])(
    'convenience path matches the CPU op step by step: B=%i T=%i NH=%i C=%i maxSeq=%i',
    async (B, T, NH, C, S) => {
      const shape: DecodeShape = { batch: B, heads: NH, channels: C, maxSeq: S };
      const hs = C / NH;
      const qkv = randomLogits(B * T * 3 * C, 2, B + T + NH);
      const [kCpu, vCpu] = [new Float32Array(B * NH * S * hs), new Float32Array(B * NH * S * hs)];
      const [kGpu, vGpu] = [kCpu.slice(), vCpu.slice()];
      for (let pos = 0; pos < T; pos++) {
        const step = stepOf(qkv, B, T, C, pos);
        const expected = attentionDecode(step, kCpu, vCpu, pos, shape);
        const actual = await attentionDecodeGpu(device, step, kGpu, vGpu, pos, shape);
        expect(maxAbsDiff(actual, expected), `pos ${pos}`).toBeLessThan(2e-5);
        expect(Array.from(kGpu)).toEqual(Array.from(kCpu));
        expect(Array.from(vGpu)).toEqual(Array.from(vCpu));
      }
    },
  );

  it.each([
    [1, 256, 2, 16, 256, 0], // T = 256, one small batch
    [3, 11, 8, 24, 13, 0], // odd T, NH = 8, maxSeq > T
    [2, 7, 3, 9, 7, 64], // slices at a non-zero offset
  ])(
    'resident decode of every position equals the forward: B=%i T=%i NH=%i C=%i maxSeq=%i offset=%i',
    async (B, T, NH, C, S, gap) => {
      // All T steps go into one batch: step inputs and outputs are slices of one buffer each, at
      // 64-float (256-byte) aligned strides; the caches stay resident between the steps.
      const hs = C / NH;
      const shape: DecodeShape = { batch: B, heads: NH, channels: C, maxSeq: S };
      const qkv = randomLogits(B * T * 3 * C, 2, T * 7 + C);
      const align = (n: number) => Math.ceil(n / 64) * 64;
      const [stepStride, outStride] = [align(B * 3 * C), align(B * C)];
      const cacheLength = B * NH * S * hs;
      const steps = new Float32Array(gap + T * stepStride);
      for (let pos = 0; pos < T; pos++)
        steps.set(stepOf(qkv, B, T, C, pos), gap + pos * stepStride);
      const stepBuf = device.upload(steps, 'decode steps');
      const caches = device.storage((gap + 2 * align(cacheLength)) * 4, 'decode caches');
      device.device.queue.writeBuffer(caches, 0, new Float32Array(gap + 2 * align(cacheLength)));
      const outBuf = device.storage((gap + T * outStride) * 4, 'decode out');
      try {
        const batch = device.beginBatch('decode all');
        const kCache = { buffer: caches, offset: gap * 4, size: cacheLength * 4 };
        const vCache = {
          buffer: caches,
          offset: (gap + align(cacheLength)) * 4,
          size: cacheLength * 4,
        };
        for (let pos = 0; pos < T; pos++) {
          const qkvStep = {
            buffer: stepBuf,
            offset: (gap + pos * stepStride) * 4,
            size: B * 3 * C * 4,
          };
          const out = { buffer: outBuf, offset: (gap + pos * outStride) * 4, size: B * C * 4 };
          await encodeAttentionDecode(device, batch, { qkvStep, kCache, vCache, out }, pos, shape);
        }
        batch.submit();
        const result = await device.readF32(outBuf, gap + T * outStride);
        const expected = attentionForward(qkv, { batch: B, seq: T, heads: NH, channels: C }).out;
        const decoded = new Float32Array(B * T * C);
        for (let pos = 0; pos < T; pos++) {
          for (let b = 0; b < B; b++) {
            const from = gap + pos * outStride + b * C;
            decoded.set(result.subarray(from, from + C), (b * T + pos) * C);
          }
        }
        expect(maxAbsDiff(decoded, expected)).toBeLessThan(2e-5);
        // The caches hold k and v of positions 0 … T − 1 in (B, NH, S, hs) order.
        const cacheData = await device.readF32(caches, gap + 2 * align(cacheLength));
        const b = B - 1;
        const h = NH - 1;
        const u = T - 1;
        const at = gap + ((b * NH + h) * S + u) * hs;
        const k = cacheData.slice(at, at + hs);
        const src = (b * T + u) * 3 * C + C + h * hs;
        expect(Array.from(k)).toEqual(Array.from(qkv.slice(src, src + hs)));
      } finally {
        device.pool.release(stepBuf);
        device.pool.release(caches);
        device.pool.release(outBuf);
      }
    },
  );

  it('rejects bad positions and short buffers before any dispatch', async () => {
    const shape = { batch: 1, heads: 1, channels: 4, maxSeq: 2 };
    const [step, k, v] = [new Float32Array(12), new Float32Array(8), new Float32Array(8)];
    const created = device.pool.stats().created;
    await expect(attentionDecodeGpu(device, step, k, v, 2, shape)).rejects.toThrow(
      /pos must be an integer in \[0, 1\], got 2/,
    );
    await expect(attentionDecodeGpu(device, step, k.subarray(1), v, 0, shape)).rejects.toThrow(
      OpInputError,
    );
    expect(device.pool.stats().created).toBe(created);
    const big = device.storage(64 * 4, 'big');
    try {
      const batch = device.beginBatch('decode short');
      const kCache = { buffer: big, offset: 0, size: 16 }; // 4 f32 of the 8 needed
      await expect(
        encodeAttentionDecode(
          device,
          batch,
          { qkvStep: big, kCache, vCache: big, out: big },
          0,
          shape,
        ),
      ).rejects.toThrow(/kCache must bind at least 8 f32 \(32 bytes\), got 16 bytes/);
    } finally {
      device.pool.release(big);
    }
  });
});
