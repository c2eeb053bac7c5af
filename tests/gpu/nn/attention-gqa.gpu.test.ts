/**
 * Parity of kernels/nn/attention_gqa_forward.wgsl and attention_gqa_backward_{scores,kv}.wgsl
 * with the Float32 CPU twin (src/ops/nn/attention-gqa.ts); runs in Node (Dawn) and in Chromium.
 *
 * Tolerances: the kernels accumulate in f32, the CPU twin in float64 and rounds once. Inputs are
 * uniform in [−2, 2) (scores O(1)–O(10), probabilities in [0, 1]); a dot product of hs ≤ 64 terms
 * and a softmax over ≤ 160 keys carry ~1e-6 relative error in f32, and the forward's online
 * softmax rescales the running sum a few times more (≤ S / lanes rescalings, each one rounding):
 * 2e-5 absolute on probs and out, as the tiny GPT's attention test. dq, dk, dv sum up to G·T
 * products that grow with T and hs, so they are compared relative to the largest |expected|
 * (1e-5 · max + 1e-6). A wrong key, head or group index moves outputs by O(0.1) or more.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeGqaAttentionForward,
  gqaAttentionBackwardGpu,
  gqaAttentionForwardGpu,
} from '../../../src/gpu/kernels/nn/attention-gqa';
import { encodeKvCacheAppend } from '../../../src/gpu/kernels/nn/kv-cache';
import { OpInputError } from '../../../src/ops/errors';
import {
  gqaAttentionBackward,
  gqaAttentionForward,
  type GqaShape,
} from '../../../src/ops/nn/attention-gqa';
import { expectClose } from '../../support/expect-close';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

function inputs(shape: GqaShape, seed: number) {
  const { batch: B, seq: T, heads: NH, kvHeads: NKV, headSize: hs } = shape;
  const S = (shape.past ?? 0) + T;
  return {
    q: randomLogits(B * T * NH * hs, 2, seed),
    k: randomLogits(B * S * NKV * hs, 2, seed + 1),
    v: randomLogits(B * S * NKV * hs, 2, seed + 2),
    dout: randomLogits(B * T * NH * hs, 1, seed + 3),
  };
}

// [B, T, P, NH, NKV, hs]: MQA (NKV = 1), MHA (NKV = NH), G = 3, hs = 32 / 64 / odd, past > 0,
// B > 1, a decoding step (T = 1, P > 0), a prefill of 96 keys, Qwen3's head size 128.
const SHAPES: [number, number, number, number, number, number][] = [
  [1, 1, 0, 1, 1, 1],
  [2, 5, 0, 4, 1, 8],
  [3, 7, 0, 3, 3, 5],
  [2, 6, 0, 6, 2, 32],
  [1, 9, 4, 6, 2, 7],
  [3, 1, 40, 4, 2, 64],
  [2, 4, 11, 9, 3, 33],
  [1, 96, 0, 3, 1, 64],
  [2, 3, 70, 8, 8, 16],
  [1, 4, 3, 4, 2, 128],
];

describe.skipIf(!gpu)('grouped-query attention kernels vs CPU reference', () => {
  const device = gpu!;

  it.each(SHAPES)(
    'forward and backward match on B=%i T=%i P=%i NH=%i NKV=%i hs=%i',
    async (batch, seq, past, heads, kvHeads, headSize) => {
      const shape: GqaShape = { batch, seq, past, heads, kvHeads, headSize };
      const { q, k, v, dout } = inputs(shape, batch * 1000 + seq * 10 + heads + past);
      const expected = gqaAttentionForward(q, k, v, shape);
      const actual = await gqaAttentionForwardGpu(device, q, k, v, shape);
      expectClose(actual.out, expected.out, 2e-5, 0, 'out');
      expectClose(actual.probs!, expected.probs, 2e-5, 0, 'probs');

      const grads = gqaAttentionBackward(dout, q, k, v, expected.probs, shape);
      const gpuGrads = await gqaAttentionBackwardGpu(device, dout, q, k, v, expected.probs, shape);
      for (const name of ['dq', 'dk', 'dv'] as const) {
        expectClose(gpuGrads[name], grads[name], 1e-5 * maxAbs(grads[name]) + 1e-6, 0, name);
      }
    },
  );

  // Software adapters default to 1 lane per row, hardware to 32–64; every split must agree,
  // including rows of different lengths in one workgroup and a group that spans two (b, h) blocks.
  // Without probs, out starts as NaN: a dispatch that did not run cannot pass on stale contents.
  it.each([1, 2, 8, 32, 64] as const)(
    'lanes = %i matches, with and without probs',
    async (lanes) => {
      const shape: GqaShape = { batch: 2, seq: 13, past: 5, heads: 6, kvHeads: 3, headSize: 24 };
      const { q, k, v } = inputs(shape, lanes);
      const expected = gqaAttentionForward(q, k, v, shape);
      const withProbs = await gqaAttentionForwardGpu(device, q, k, v, shape, { lanes });
      expectClose(withProbs.out, expected.out, 2e-5, 0, 'out');
      expectClose(withProbs.probs!, expected.probs, 2e-5, 0, 'probs');
      const held = [q, k, v, new Float32Array(q.length).fill(NaN)].map((a) =>
        device.upload(a, 'gqa'),
      );
      try {
        const [qb, kb, vb, out] = held as [GPUBuffer, GPUBuffer, GPUBuffer, GPUBuffer];
        const batch = device.beginBatch('gqa without probs');
        await encodeGqaAttentionForward(device, batch, { q: qb, k: kb, v: vb, out }, shape, {
          lanes,
        });
        batch.submit();
        expectClose(
          await device.readF32(out, q.length),
          expected.out,
          2e-5,
          0,
          'out without probs',
        );
      } finally {
        for (const buffer of held) device.pool.release(buffer);
      }
    },
  );

  // A tile is lanes × 8 keys: 600 keys are three tiles at 32 lanes and two at 64, with the last
  // one partly filled, so the online softmax's rescaling between tiles is exercised on every split.
  it.each([1, 32, 64] as const)('lanes = %i matches over several tiles of keys', async (lanes) => {
    const shape: GqaShape = { batch: 2, seq: 3, past: 597, heads: 4, kvHeads: 2, headSize: 16 };
    const { q, k, v } = inputs(shape, 50 + lanes);
    const expected = gqaAttentionForward(q, k, v, shape);
    const actual = await gqaAttentionForwardGpu(device, q, k, v, shape, { lanes });
    expectClose(actual.out, expected.out, 2e-5, 0, 'out');
    expectClose(actual.probs!, expected.probs, 2e-5, 0, 'probs');
  });

  // Split over key chunks: a decoding step (T = 1) and a short prefill whose early rows have no
  // keys in the later chunks (their partials are empty and must drop out of the merge).
  it.each([
    [1, 2],
    [1, 7],
    [32, 3],
    [2, 40],
  ] as const)('lanes = %i, chunks = %i matches without probs', async (lanes, chunks) => {
    for (const [seq, past] of [
      [1, 600],
      [50, 0],
    ] as const) {
      const shape: GqaShape = { batch: 2, seq, past, heads: 6, kvHeads: 2, headSize: 16 };
      const { q, k, v } = inputs(shape, 70 + chunks + seq);
      const expected = gqaAttentionForward(q, k, v, shape);
      const actual = await gqaAttentionForwardGpu(device, q, k, v, shape, {
        lanes,
        chunks,
        probs: false,
      });
      expectClose(actual.out, expected.out, 2e-5, 0, `out (T = ${seq}, P = ${past})`);
    }
  });

  // Prompts of different lengths decoding in one batch: each sequence reads keys up to its own
  // past (pasts) in k, v sized for the largest. Rows of a workgroup span sequences of different
  // lengths; keys after a sequence's own are NaN, so reading one would show. With probs, without
  // (1 chunk), and split into chunks some sequences have no keys in.
  it.each([
    [1, 1],
    [8, 1],
    [64, 1],
    [1, 3],
    [32, 5],
  ] as const)(
    'lanes = %i, chunks = %i: per-sequence pasts match the CPU twin',
    async (lanes, chunks) => {
      for (const seq of [1, 3]) {
        const pasts = [0, 37, 5, 40];
        const shape: GqaShape = {
          batch: 4,
          seq,
          past: 40,
          pasts,
          heads: 6,
          kvHeads: 2,
          headSize: 16,
        };
        const { q, k, v } = inputs(shape, 90 + lanes + chunks + seq);
        const W = 2 * 16;
        const S = 40 + seq;
        pasts.forEach((past, b) => {
          k.fill(NaN, (b * S + past + seq) * W, (b + 1) * S * W);
          v.fill(NaN, (b * S + past + seq) * W, (b + 1) * S * W);
        });
        const expected = gqaAttentionForward(q, k, v, shape);
        const probs = chunks === 1;
        const actual = await gqaAttentionForwardGpu(device, q, k, v, shape, {
          lanes,
          chunks,
          probs,
        });
        expectClose(actual.out, expected.out, 2e-5, 0, `out (T = ${seq})`);
        if (probs) expectClose(actual.probs!, expected.probs, 2e-5, 0, `probs (T = ${seq})`);
      }
    },
  );

  it('backward gives the same bits on every run (no atomics)', async () => {
    const shape: GqaShape = { batch: 2, seq: 20, heads: 6, kvHeads: 2, headSize: 16 };
    const { q, k, v, dout } = inputs(shape, 9);
    const { probs } = gqaAttentionForward(q, k, v, shape);
    const a = await gqaAttentionBackwardGpu(device, dout, q, k, v, probs, shape);
    const b = await gqaAttentionBackwardGpu(device, dout, q, k, v, probs, shape);
    expect(Array.from(b.dk)).toEqual(Array.from(a.dk));
    expect(Array.from(b.dv)).toEqual(Array.from(a.dv));
    expect(Array.from(b.dq)).toEqual(Array.from(a.dq));
  });

  // A generator's loop on the GPU: caches of capacity Smax allocated once, a prefill of T0 rows
  // appended, then decoding steps of one row each; every step's output matches the CPU twin run
  // on the dense prefix (k, v rows 0 … P) with past = P.
  it('decodes step by step from a KV cache of fixed capacity, without probs', async () => {
    const B = 4;
    const NH = 6;
    const NKV = 2;
    const hs = 16;
    const W = NKV * hs;
    const capacity = 12;
    const prefill = 5;
    const steps = 4;
    const total = prefill + steps;
    const kAll = randomLogits(B * total * W, 2, 31);
    const vAll = randomLogits(B * total * W, 2, 32);
    const qAll = randomLogits(B * total * NH * hs, 2, 33);
    const rows = (all: Float32Array, from: number, to: number, width: number) => {
      const out = new Float32Array(B * (to - from) * width);
      for (let b = 0; b < B; b++) {
        out.set(
          all.subarray((b * total + from) * width, (b * total + to) * width),
          b * (to - from) * width,
        );
      }
      return out;
    };
    const kCache = device.storage(B * capacity * W * 4, 'test k cache');
    const vCache = device.storage(B * capacity * W * 4, 'test v cache');
    const out = device.storage(B * prefill * NH * hs * 4, 'test out');
    const held: GPUBuffer[] = [kCache, vCache, out];
    try {
      for (let step = 0; step <= steps; step++) {
        const past = step === 0 ? 0 : prefill + step - 1;
        const seq = step === 0 ? prefill : 1;
        const kNew = device.upload(rows(kAll, past, past + seq, W), 'k new');
        const vNew = device.upload(rows(vAll, past, past + seq, W), 'v new');
        const q = device.upload(rows(qAll, past, past + seq, NH * hs), 'q');
        held.push(kNew, vNew, q);
        const batch = device.beginBatch('gqa decode test');
        await encodeKvCacheAppend(
          device,
          batch,
          { kNew, vNew, kCache, vCache },
          { batch: B, seq, width: W, capacity, past },
        );
        const shape = { batch: B, seq, past, heads: NH, kvHeads: NKV, headSize: hs };
        await encodeGqaAttentionForward(
          device,
          batch,
          { q, k: kCache, v: vCache, out },
          { ...shape, kvCapacity: capacity },
        );
        batch.submit();
        const actual = await device.readF32(out, B * seq * NH * hs);
        const expected = gqaAttentionForward(
          rows(qAll, past, past + seq, NH * hs),
          rows(kAll, 0, past + seq, W),
          rows(vAll, 0, past + seq, W),
          shape,
        );
        expectClose(actual, expected.out, 2e-5, 0, `out at step ${step}`);
      }
    } finally {
      for (const buffer of held) device.pool.release(buffer);
    }
  });

  it('rejects bad shapes naming the field, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const f = (n: number) => new Float32Array(n);
    const shape: GqaShape = { batch: 1, seq: 2, heads: 4, kvHeads: 2, headSize: 4 };
    await expect(
      gqaAttentionForwardGpu(device, f(32), f(16), f(16), { ...shape, kvHeads: 3 }),
    ).rejects.toThrow(/kvHeads.*must divide heads \(4\)/);
    await expect(gqaAttentionForwardGpu(device, f(31), f(16), f(16), shape)).rejects.toThrow(
      OpInputError,
    );
    await expect(gqaAttentionForwardGpu(device, f(31), f(16), f(16), shape)).rejects.toThrow(
      /\bq\b.*32/,
    );
    await expect(gqaAttentionForwardGpu(device, f(32), f(16), f(15), shape)).rejects.toThrow(
      /\bv\b/,
    );
    await expect(
      gqaAttentionBackwardGpu(device, f(32), f(32), f(16), f(16), f(15), shape),
    ).rejects.toThrow(/probs must have B × NH × T × \(past \+ T\) = 16 elements, got 15/);
    expect(device.pool.stats().created).toBe(created);
    const batch = device.beginBatch('unused');
    const q = device.storage(32 * 4, 'q');
    try {
      await expect(
        encodeGqaAttentionForward(
          device,
          batch,
          { q, k: q, v: q, out: q },
          { ...shape, kvCapacity: 1 },
        ),
      ).rejects.toThrow(/kvCapacity/);
      await expect(
        encodeGqaAttentionForward(device, batch, { q, k: q, v: q, out: q, probs: q }, shape, {
          chunks: 2,
        }),
      ).rejects.toThrow(/chunks must be 1 when probs are written, got 2/);
      await expect(
        encodeGqaAttentionForward(device, batch, { q, k: q, v: q, out: q }, shape, { chunks: 3 }),
      ).rejects.toThrow(/chunks must be an integer in \[1, 2\]/);
    } finally {
      device.pool.release(q);
    }
  });
});
