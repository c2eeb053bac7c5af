/**
 * Parity of kernels/nn/embedding_{forward,backward_wte,backward_wpe}.wgsl with embeddingForward /
 * embeddingBackward; runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  embeddingBackwardGpu,
  embeddingForwardGpu,
  encodeEmbeddingBackward,
  encodeEmbeddingForward,
} from '../../../src/gpu/kernels/nn/embedding';
import { OpInputError } from '../../../src/ops/errors';
import {
  embeddingBackward,
  embeddingForward,
  type EmbeddingShape,
} from '../../../src/ops/nn/embedding';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../../support/random';

const gpu = await testGpu();

function randomTokens(count: number, vocab: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: count }, () => Math.floor(next() * vocab));
}

// [B, T, C, V, maxSeq, posOffset]: odd sizes, C around the 64-thread block, a vocabulary larger
// than the ids used (rows of zeros), and the lab's largest shape (V = 256, T = 256).
const SHAPES: [number, number, number, number, number, number][] = [
  [1, 1, 1, 1, 1, 0],
  [2, 3, 5, 7, 4, 1],
  [3, 17, 65, 50, 20, 2],
  [4, 33, 64, 300, 40, 7],
  [2, 64, 129, 256, 64, 0],
  [2, 256, 48, 256, 256, 0],
];

describe.skipIf(!gpu)('embedding kernels vs CPU reference', () => {
  const device = gpu!;

  it.each(SHAPES)('forward matches on B=%i T=%i C=%i V=%i maxSeq=%i posOffset=%i', async (...s) => {
    const [batch, seq, channels, vocab, maxSeq, posOffset] = s;
    const shape: EmbeddingShape = { batch, seq, channels, vocab, maxSeq };
    const tokens = randomTokens(batch * seq, vocab, seq * 31 + vocab);
    const wte = randomLogits(vocab * channels, 1, 1);
    const wpe = randomLogits(maxSeq * channels, 1, 2);
    const gpuX = await embeddingForwardGpu(device, tokens, wte, wpe, shape, posOffset);
    // One f32 addition on either side (the twin rounds the exact sum once): equal up to 1 ulp.
    expect(maxAbsDiff(gpuX, embeddingForward(tokens, wte, wpe, shape, posOffset))).toBeLessThan(
      3e-7,
    );
  });

  it.each(SHAPES)('backward matches on B=%i T=%i C=%i V=%i maxSeq=%i', async (...s) => {
    const [batch, seq, channels, vocab, maxSeq] = s;
    const shape: EmbeddingShape = { batch, seq, channels, vocab, maxSeq };
    // Few distinct ids so that rows repeat many times (up to ~100 occurrences of one id).
    const tokens = randomTokens(batch * seq, Math.min(vocab, 9), seq + vocab);
    const dx = randomLogits(batch * seq * channels, 1, 3);
    const head = randomLogits(vocab * channels, 1, 4);
    const cpu = embeddingBackward(dx, tokens, shape);
    const out = await embeddingBackwardGpu(device, dx, tokens, shape);
    // f32 sums of ≤ 512 terms in [−1, 1), added in token order: the rounding error of a running
    // sum is ≲ n·2^-24·max|partial sum|; the partial sums here stay ≲ 30, so ≲ 512·6e-8·30 ≈ 1e-3
    // in the worst case, ~√n·… ≈ 5e-6 in practice. 2e-5 catches any wrong or missing term (≥ 1e-3).
    expect(maxAbsDiff(out.dwte, cpu.dwte)).toBeLessThan(2e-5);
    expect(maxAbsDiff(out.dwpe, cpu.dwpe)).toBeLessThan(2e-5);
    // accumulateDwte on the smaller shapes (SwiftShader is slow; the large ones take seconds).
    if (batch * seq <= 256) {
      const cpuAcc = embeddingBackward(dx, tokens, shape, { accumulateDwte: head });
      const acc = await embeddingBackwardGpu(device, dx, tokens, shape, { accumulateDwte: head });
      expect(maxAbsDiff(acc.dwte, cpuAcc.dwte)).toBeLessThan(2e-5);
      expect(maxAbsDiff(acc.dwpe, cpu.dwpe)).toBeLessThan(2e-5);
    }
  });

  it('without wpe (rotary positions) writes the token rows alone, as the CPU twin', async () => {
    const shape: EmbeddingShape = { batch: 3, seq: 5, channels: 70, vocab: 30, maxSeq: 9 };
    const tokens = randomTokens(15, 30, 8);
    const wte = randomLogits(30 * 70, 1, 9);
    const gpuX = await embeddingForwardGpu(device, tokens, wte, undefined, shape, 3);
    // A copy on both sides: equal bit for bit.
    expect(Array.from(gpuX)).toEqual(
      Array.from(embeddingForward(tokens, wte, undefined, shape, 3)),
    );
  });

  it('backward without wpe (rotary positions) returns dwte alone, as the CPU twin', async () => {
    const shape: EmbeddingShape = { batch: 3, seq: 17, channels: 65, vocab: 50, maxSeq: 20 };
    const tokens = randomTokens(3 * 17, 9, 11);
    const dx = randomLogits(3 * 17 * 65, 1, 12);
    const head = randomLogits(50 * 65, 1, 13);
    for (const accumulateDwte of [undefined, head]) {
      const cpu = embeddingBackward(dx, tokens, shape, { wpe: false, accumulateDwte });
      const out = await embeddingBackwardGpu(device, dx, tokens, shape, {
        wpe: false,
        accumulateDwte,
      });
      expect(Object.keys(out)).toEqual(['dwte']);
      // Same sums as the learned case's test above (≤ 51 terms): 2e-5 catches a wrong term.
      expect(maxAbsDiff(out.dwte, cpu.dwte)).toBeLessThan(2e-5);
    }
  });

  it('is deterministic: the same bits on every run', async () => {
    const shape: EmbeddingShape = { batch: 4, seq: 100, channels: 70, vocab: 20, maxSeq: 128 };
    const tokens = randomTokens(400, 5, 1);
    const dx = randomLogits(400 * 70, 1, 2);
    const first = await embeddingBackwardGpu(device, dx, tokens, shape);
    const again = await embeddingBackwardGpu(device, dx, tokens, shape);
    expect(Array.from(again.dwte)).toEqual(Array.from(first.dwte));
    expect(Array.from(again.dwpe)).toEqual(Array.from(first.dwpe));
  });

  it('binds slices of flat parameter, activation and gradient buffers at aligned offsets', async () => {
    const shape: EmbeddingShape = { batch: 3, seq: 10, channels: 20, vocab: 13, maxSeq: 16 };
    const { batch, seq, channels: C, vocab: V, maxSeq } = shape;
    // Flat layout, each tensor at a multiple of 64 floats (256 bytes):
    //   params: [pad 64 | wte 260 → 320 | wpe 320] ; acts: [pad 128 | x 600]
    //   grads:  [pad 64 | dwte 260 → 320 | dwpe 320]; tokens: [pad 64 | ids 30]
    const wteAt = 64;
    const wpeAt = 64 + 320;
    const paramsLength = wpeAt + maxSeq * C + 64;
    const xAt = 128;
    const actsLength = xAt + batch * seq * C + 64;
    const tokensAt = 64;
    const wte = randomLogits(V * C, 1, 11);
    const wpe = randomLogits(maxSeq * C, 1, 12);
    const tokens = randomTokens(batch * seq, V, 13);
    const dx = randomLogits(batch * seq * C, 1, 14);
    const tied = randomLogits(V * C, 1, 15); // the LM head's part of dwte, written first

    const sentinel = -7;
    const params = new Float32Array(paramsLength).fill(sentinel);
    params.set(wte, wteAt);
    params.set(wpe, wpeAt);
    const grads = new Float32Array(paramsLength).fill(sentinel);
    grads.set(tied, wteAt);
    const tokensFlat = new Int32Array(tokensAt + tokens.length);
    tokensFlat.set(tokens, tokensAt);

    const paramsBuffer = device.upload(params, 'params');
    const gradsBuffer = device.upload(grads, 'grads');
    const tokensBuffer = device.upload(tokensFlat, 'tokens');
    const actsBuffer = device.upload(new Float32Array(actsLength).fill(sentinel), 'acts');
    const dxBuffer = device.upload(new Float32Array(actsLength).fill(sentinel), 'dx');
    device.device.queue.writeBuffer(dxBuffer, xAt * 4, dx.buffer, dx.byteOffset, dx.byteLength);
    const slice = (buffer: GPUBuffer, at: number, length: number) => ({
      buffer,
      offset: at * 4,
      size: length * 4,
    });
    try {
      const batchCmd = device.beginBatch('embedding slices');
      const tokensRef = slice(tokensBuffer, tokensAt, tokens.length);
      await encodeEmbeddingForward(
        device,
        batchCmd,
        {
          tokens: tokensRef,
          wte: slice(paramsBuffer, wteAt, V * C),
          wpe: slice(paramsBuffer, wpeAt, maxSeq * C),
          x: slice(actsBuffer, xAt, batch * seq * C),
        },
        shape,
        3,
      );
      await encodeEmbeddingBackward(
        device,
        batchCmd,
        {
          dx: slice(dxBuffer, xAt, batch * seq * C),
          tokens: tokensRef,
          dwte: slice(gradsBuffer, wteAt, V * C),
          dwpe: slice(gradsBuffer, wpeAt, maxSeq * C),
        },
        shape,
        { accumulateDwte: true },
      );
      batchCmd.submit();
      const [acts, gradsOut] = await Promise.all([
        device.readF32(actsBuffer, actsLength),
        device.readF32(gradsBuffer, paramsLength),
      ]);
      const x = acts.subarray(xAt, xAt + batch * seq * C);
      expect(maxAbsDiff(x, embeddingForward(tokens, wte, wpe, shape, 3))).toBeLessThan(3e-7);
      const cpu = embeddingBackward(dx, tokens, shape, { accumulateDwte: tied });
      expect(maxAbsDiff(gradsOut.subarray(wteAt, wteAt + V * C), cpu.dwte)).toBeLessThan(1e-5);
      expect(maxAbsDiff(gradsOut.subarray(wpeAt, wpeAt + maxSeq * C), cpu.dwpe)).toBeLessThan(1e-5);
      // Nothing outside the slices was written.
      const untouched = (a: Float32Array, ranges: [number, number][]) =>
        ranges.every(([from, to]) => a.subarray(from, to).every((v) => v === sentinel));
      expect(
        untouched(acts, [
          [0, xAt],
          [xAt + batch * seq * C, actsLength],
        ]),
      ).toBe(true);
      expect(
        untouched(gradsOut, [
          [0, wteAt],
          [wteAt + V * C, wpeAt],
          [wpeAt + maxSeq * C, paramsLength],
        ]),
      ).toBe(true);
    } finally {
      for (const b of [paramsBuffer, gradsBuffer, tokensBuffer, actsBuffer, dxBuffer]) {
        device.pool.release(b);
      }
    }
  });

  it('ignores ids ≥ V (and negative ids) on the encode path, never reading out of bounds', async () => {
    const shape: EmbeddingShape = { batch: 1, seq: 4, channels: 3, vocab: 2, maxSeq: 4 };
    const tokens = new Int32Array([1, 2, -1, 0]); // 2 = V and −1 are out of range
    const wte = new Float32Array([1, 1, 1, 2, 2, 2]);
    const wpe = new Float32Array([0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 0.3, 0.3, 0.3, 0.4, 0.4, 0.4]);
    const dx = new Float32Array([1, 1, 1, 10, 10, 10, 100, 100, 100, 1000, 1000, 1000]);
    const tokensBuffer = device.upload(tokens, 'tokens');
    const wteBuffer = device.upload(wte, 'wte');
    const wpeBuffer = device.upload(wpe, 'wpe');
    const dxBuffer = device.upload(dx, 'dx');
    const x = device.storage(12 * 4, 'x');
    const dwte = device.storage(6 * 4, 'dwte');
    const dwpe = device.storage(12 * 4, 'dwpe');
    try {
      const batch = device.beginBatch('embedding bad ids');
      await encodeEmbeddingForward(
        device,
        batch,
        { tokens: tokensBuffer, wte: wteBuffer, wpe: wpeBuffer, x },
        shape,
      );
      await encodeEmbeddingBackward(
        device,
        batch,
        { dx: dxBuffer, tokens: tokensBuffer, dwte, dwpe },
        shape,
      );
      batch.submit();
      const [xOut, dwteOut] = await Promise.all([device.readF32(x, 12), device.readF32(dwte, 6)]);
      // x[t] = wte[id] + wpe[t]: t = 0 → 2 + 0.1, t = 3 → 1 + 0.4; t = 1, 2 get wpe[t] only.
      const expectedX = [2.1, 2.1, 2.1, 0.2, 0.2, 0.2, 0.3, 0.3, 0.3, 1.4, 1.4, 1.4];
      expectedX.forEach((e, i) => expect(xOut[i]).toBeCloseTo(e, 6));
      // dwte[0] = dx at t = 3, dwte[1] = dx at t = 0; dx at t = 1, 2 is dropped.
      expect(Array.from(dwteOut)).toEqual([1000, 1000, 1000, 1, 1, 1]);
    } finally {
      for (const b of [tokensBuffer, wteBuffer, wpeBuffer, dxBuffer, x, dwte, dwpe]) {
        device.pool.release(b);
      }
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const shape: EmbeddingShape = { batch: 1, seq: 2, channels: 2, vocab: 3, maxSeq: 2 };
    const created = device.pool.stats().created;
    const wte = new Float32Array(6);
    const wpe = new Float32Array(4);
    await expect(
      embeddingForwardGpu(device, new Int32Array([0, 3]), wte, wpe, shape),
    ).rejects.toThrow(/tokens must be ids in \[0, 3\) \(vocab\), but index 1/);
    await expect(
      embeddingBackwardGpu(device, new Float32Array(4), new Uint32Array([5, 0]), shape),
    ).rejects.toThrow(OpInputError);
    await expect(
      embeddingForwardGpu(device, new Int32Array([0, 1]), wte, wpe, shape, 1),
    ).rejects.toThrow(/posOffset must be an integer in \[0, 0\]/);
    expect(device.pool.stats().created).toBe(created);
  });
});
