/**
 * Parity of kernels/nn/attention_forward.wgsl and attention_backward_{scores,grads}.wgsl with the
 * Float32 CPU twin (src/ops/nn/attention.ts); runs in Node (Dawn) and in Chromium.
 *
 * Tolerances: the kernels accumulate in f32, the CPU twin in float64 and rounds once. Inputs are
 * uniform in [−2, 2), so scores are O(1)–O(10) and probabilities in [0, 1]: a dot product of hs ≤ 256
 * terms and a softmax over ≤ 256 keys carry ~1e-6 relative error in f32, hence 2e-5 absolute on probs
 * and out. dqkv sums up to T = 256 products whose magnitude grows with T and hs, so the backward is
 * compared relative to the largest |expected| (1e-5 · max|dqkv| + 1e-6).
 */
import { describe, expect, it } from 'vitest';
import {
  attentionBackwardGpu,
  attentionForwardGpu,
  encodeAttentionBackward,
  encodeAttentionForward,
} from '../../../src/gpu/kernels/nn/attention';
import { OpInputError } from '../../../src/ops/errors';
import {
  type AttentionShape,
  attentionBackward,
  attentionForward,
} from '../../../src/ops/nn/attention';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../../support/random';

const gpu = await testGpu();

function maxAbs(a: Float32Array): number {
  let m = 0;
  for (const v of a) m = Math.max(m, Math.abs(v));
  return m;
}

function inputs(shape: AttentionShape, seed: number) {
  const { batch: B, seq: T, channels: C } = shape;
  const qkv = randomLogits(B * T * 3 * C, 2, seed);
  const dout = randomLogits(B * T * C, 1, seed + 1);
  return { qkv, dout };
}

// [B, T, NH, C]: T = 1, odd T, hs = 7 and 1, NH = 8 and 16, T = 256 (one small batch), hs = 256.
const SHAPES: [number, number, number, number][] = [
  [1, 1, 1, 4],
  [3, 1, 2, 6],
  [2, 5, 2, 8],
  [3, 7, 3, 21],
  [2, 33, 8, 64],
  [2, 17, 16, 32],
  [1, 3, 1, 256],
  [2, 9, 4, 4],
  [1, 256, 2, 16],
];

describe.skipIf(!gpu)('attention kernels vs CPU reference', () => {
  const device = gpu!;

  it.each(SHAPES)('forward and backward match on B=%i T=%i NH=%i C=%i', async (B, T, NH, C) => {
    const shape = { batch: B, seq: T, heads: NH, channels: C };
    const { qkv, dout } = inputs(shape, B * 1000 + T * 10 + NH);
    const expected = attentionForward(qkv, shape);
    const actual = await attentionForwardGpu(device, qkv, shape);
    expect(maxAbsDiff(actual.probs, expected.probs)).toBeLessThan(2e-5);
    expect(maxAbsDiff(actual.out, expected.out)).toBeLessThan(2e-5);
    // Zeros above the diagonal exactly (the backward relies on nothing there, but callers may).
    for (let r = 0; r < B * NH * T; r++) {
      for (let u = (r % T) + 1; u < T; u++) expect(actual.probs[r * T + u]).toBe(0);
    }
    const dqkv = attentionBackward(dout, qkv, expected.probs, shape);
    const gpuDqkv = await attentionBackwardGpu(device, dout, qkv, expected.probs, shape);
    expect(maxAbsDiff(gpuDqkv, dqkv)).toBeLessThan(1e-5 * maxAbs(dqkv) + 1e-6);
  });

  it('matches on 8 random shapes (seeded) and every workgroup size', async () => {
    const next = seededRandom(77);
    const sizes = [32, 64, 128, 256] as const;
    for (let trial = 0; trial < 8; trial++) {
      const NH = 1 + Math.floor(next() * 6);
      const hs = 1 + Math.floor(next() * 40);
      const shape = {
        batch: 1 + Math.floor(next() * 3),
        seq: 1 + Math.floor(next() * 70),
        heads: NH,
        channels: NH * hs,
      };
      const workgroupSize = sizes[trial % 4]!;
      const { qkv, dout } = inputs(shape, trial);
      const expected = attentionForward(qkv, shape);
      const actual = await attentionForwardGpu(device, qkv, shape, { workgroupSize });
      const label = `${JSON.stringify(shape)} wg ${workgroupSize}`;
      expect(maxAbsDiff(actual.out, expected.out), label).toBeLessThan(2e-5);
      expect(maxAbsDiff(actual.probs, expected.probs), label).toBeLessThan(2e-5);
      const dqkv = attentionBackward(dout, qkv, expected.probs, shape);
      const gpuDqkv = await attentionBackwardGpu(device, dout, qkv, expected.probs, shape, {
        workgroupSize,
      });
      expect(maxAbsDiff(gpuDqkv, dqkv), label).toBeLessThan(1e-5 * maxAbs(dqkv) + 1e-6);
    }
  });

  it('reads and writes slices of shared buffers at 256-byte-aligned offsets', async () => {
    // WebGPU forbids one buffer bound read-only and writable in the same dispatch, so the tensors
    // live in four buffers by role: inputs (qkv, dout), forward outputs (out, probs), the
    // backward's scratch (dscores) and its output (dqkv); each at a non-zero 64-float offset.
    const shape = { batch: 2, seq: 6, heads: 2, channels: 10 }; // hs = 5
    const { batch: B, seq: T, heads: NH, channels: C } = shape;
    const { qkv, dout } = inputs(shape, 5);
    const groups = {
      inputs: { qkv: B * T * 3 * C, dout: B * T * C },
      forward: { out: B * T * C, probs: B * NH * T * T },
      scratch: { dscores: B * NH * T * T },
      grads: { dqkv: B * T * 3 * C },
    };
    const GUARD = 123; // must survive outside the slices
    const made: GPUBuffer[] = [];
    const layout = new Map<string, { buffer: GPUBuffer; offset: number; size: number }>();
    try {
      for (const group of Object.values(groups)) {
        let at = 64;
        const offsets: [string, number, number][] = [];
        for (const [name, n] of Object.entries(group)) {
          offsets.push([name, at, n]);
          at += Math.ceil(n / 64) * 64 + 64;
        }
        const data = new Float32Array(at).fill(GUARD);
        if ('qkv' in group) {
          data.set(qkv, offsets[0]![1]);
          data.set(dout, offsets[1]![1]);
        }
        const buffer = device.upload(data, 'attention slices');
        made.push(buffer);
        for (const [name, offset, n] of offsets) {
          layout.set(name, { buffer, offset: offset * 4, size: n * 4 });
        }
      }
      const slice = (name: string) => layout.get(name)!;
      const batch = device.beginBatch('attention slices');
      await encodeAttentionForward(
        device,
        batch,
        { qkv: slice('qkv'), out: slice('out'), probs: slice('probs') },
        shape,
      );
      await encodeAttentionBackward(
        device,
        batch,
        {
          dout: slice('dout'),
          qkv: slice('qkv'),
          probs: slice('probs'),
          dqkv: slice('dqkv'),
          dscores: slice('dscores'),
        },
        shape,
      );
      batch.submit();
      const read = async (name: string) => {
        const { buffer, offset, size } = slice(name);
        const all = await device.readF32(buffer, buffer.size / 4);
        // Guards: the 64 floats before the slice, and whatever follows it, are untouched.
        for (let i = offset / 4 - 64; i < offset / 4; i++) expect(all[i]).toBe(GUARD);
        return all.slice(offset / 4, (offset + size) / 4);
      };
      const expected = attentionForward(qkv, shape);
      const probs = await read('probs');
      expect(maxAbsDiff(await read('out'), expected.out)).toBeLessThan(2e-5);
      expect(maxAbsDiff(probs, expected.probs)).toBeLessThan(2e-5);
      const dqkv = attentionBackward(dout, qkv, probs, shape);
      expect(maxAbsDiff(await read('dqkv'), dqkv)).toBeLessThan(1e-5 * maxAbs(dqkv) + 1e-6);
      const afterOut = await device.readF32(slice('out').buffer, slice('out').buffer.size / 4);
      const gapStart = (slice('out').offset + slice('out').size) / 4;
      for (let i = gapStart; i < slice('probs').offset / 4; i++) expect(afterOut[i]).toBe(GUARD);
    } finally {
      for (const buffer of made) device.pool.release(buffer);
    }
  });

  it('rejects bad shapes and short buffers before any dispatch', async () => {
    const shape = { batch: 1, seq: 2, heads: 1, channels: 4 };
    const created = device.pool.stats().created;
    await expect(attentionForwardGpu(device, new Float32Array(23), shape)).rejects.toThrow(
      /qkv must have B × T × 3C/,
    );
    await expect(
      attentionForwardGpu(device, new Float32Array(24), { ...shape, seq: 257 }),
    ).rejects.toThrow(OpInputError);
    await expect(
      attentionBackwardGpu(
        device,
        new Float32Array(8),
        new Float32Array(24),
        new Float32Array(3),
        shape,
      ),
    ).rejects.toThrow(/probs must have/);
    expect(device.pool.stats().created).toBe(created);
    const buffer = device.storage(256 * 4, 'short');
    try {
      const batch = device.beginBatch('attention short');
      const [qkv, out, probs] = [0, 64, 128].map((at) => ({ buffer, offset: at * 4, size: 64 }));
      await expect(
        encodeAttentionForward(device, batch, { qkv: qkv!, out: out!, probs: probs! }, shape),
      ).rejects.toThrow(/qkv must bind at least 24 f32 \(96 bytes\), got 64 bytes/);
    } finally {
      device.pool.release(buffer);
    }
  });
});
