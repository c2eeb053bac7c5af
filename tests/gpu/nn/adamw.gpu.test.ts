/**
 * Parity of kernels/nn/adamw.wgsl (driven by the grad-norm stats) with adamwStep(); runs in Node
 * (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { adamwGpu, encodeAdamW } from '../../../src/gpu/kernels/nn/adamw';
import { encodeGradNorm, gradNormPartialsLength } from '../../../src/gpu/kernels/nn/grad-norm';
import { OpInputError } from '../../../src/ops/errors';
import { adamwStep, type AdamWOptions } from '../../../src/ops/nn/adamw';
import { clipScale, gradNorm } from '../../../src/ops/nn/grad-norm';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

/**
 * Largest |a − b| relative to the tensor's largest magnitude max|b|: moments are sums in which
 * terms cancel, so an element near 0 carries the rounding of its larger terms.
 */
function maxScaledDiff(a: Float32Array, b: Float32Array): number {
  let scale = 0;
  for (const x of b) scale = Math.max(scale, Math.abs(x));
  return maxAbsDiff(a, b) / scale;
}

describe.skipIf(!gpu)('adamw kernel vs CPU reference', () => {
  const device = gpu!;
  const write = (buffer: GPUBuffer, floatOffset: number, data: Float32Array) =>
    device.device.queue.writeBuffer(
      buffer,
      floatOffset * 4,
      data.buffer,
      data.byteOffset,
      data.byteLength,
    );

  it('matches the hand-worked first step (g = 0.5, lr = 0.1, wd = 0.01, p = 1 → 0.899000002)', async () => {
    const out = await adamwGpu(
      device,
      new Float32Array([1]),
      new Float32Array([0.5]),
      new Float32Array(1),
      new Float32Array(1),
      new Float32Array([0.5, 1, 1, 1]), // [norm, clipScale, applied, step]
      { lr: 0.1, weightDecay: 0.01 },
    );
    // f32 spacing at 0.9 is 6e-8; a few roundings along the way.
    expect(out.params[0]).toBeCloseTo(0.899000002, 6);
    expect(out.m[0]).toBeCloseTo(0.05, 7);
    expect(out.v[0]).toBeCloseTo(0.00025, 9);
  });

  it('matches the CPU twin over 10 consecutive steps: grad norm + clipping + two decay ranges', async () => {
    // One flat parameter buffer with two tensors at 256-byte-aligned offsets (64 floats):
    // a "matrix" of 1000 floats at offset 64 (wd 0.01) and a "bias" of 77 at offset 1088 (wd 0).
    const ranges = [
      { offset: 64, count: 1000, weightDecay: 0.01 },
      { offset: 1088, count: 77, weightDecay: 0 },
    ];
    const total = 1088 + 77 + 27; // room after the last tensor
    const options: AdamWOptions = { lr: 1e-2, beta1: 0.9, beta2: 0.95, eps: 1e-8 };
    const maxNorm = 12;
    const p0 = randomLogits(total, 1, 1);
    const cpu = { params: p0.slice(), m: new Float32Array(total), v: new Float32Array(total) };

    const buffers = {
      params: device.storage(total * 4, 'params'),
      grads: device.storage(total * 4, 'grads'),
      m: device.storage(total * 4, 'm'),
      v: device.storage(total * 4, 'v'),
      partials: device.storage(gradNormPartialsLength(total) * 4, 'partials'),
      stats: device.storage(16, 'stats'),
    };
    try {
      write(buffers.params, 0, p0);
      write(buffers.m, 0, new Float32Array(total));
      write(buffers.v, 0, new Float32Array(total));
      write(buffers.stats, 0, new Float32Array(4));
      const slice = (buffer: GPUBuffer, r: (typeof ranges)[number]) => ({
        buffer,
        offset: r.offset * 4,
        size: r.count * 4,
      });
      let clippedSteps = 0;
      for (let step = 1; step <= 10; step++) {
        // Gradient scale varies so that some steps clip (norm > 12) and some do not.
        const grads = randomLogits(total, step % 3 === 0 ? 0.3 : 1.5, 100 + step);
        // Padding between tensors holds no gradient in a real model; zero it like the CPU side.
        grads.fill(0, 0, 64);
        grads.fill(0, 1064, 1088);
        grads.fill(0, 1165);
        write(buffers.grads, 0, grads);

        const batch = device.beginBatch(`adamw step ${step}`);
        await encodeGradNorm(device, batch, buffers, total, maxNorm);
        for (const r of ranges) {
          await encodeAdamW(
            device,
            batch,
            {
              params: slice(buffers.params, r),
              grads: slice(buffers.grads, r),
              m: slice(buffers.m, r),
              v: slice(buffers.v, r),
              stats: buffers.stats,
            },
            r.count,
            { ...options, weightDecay: r.weightDecay },
          );
        }
        batch.submit();

        const scale = clipScale(gradNorm(grads), maxNorm);
        if (scale < 1) clippedSteps += 1;
        for (const r of ranges) {
          const part = (a: Float32Array) => a.subarray(r.offset, r.offset + r.count);
          adamwStep(
            part(cpu.params),
            part(grads),
            part(cpu.m),
            part(cpu.v),
            step,
            { ...options, weightDecay: r.weightDecay },
            scale,
          );
        }
      }
      expect(clippedSteps).toBeGreaterThan(2);
      expect(clippedSteps).toBeLessThan(10);

      const [params, m, v, stats] = await Promise.all([
        device.readF32(buffers.params, total),
        device.readF32(buffers.m, total),
        device.readF32(buffers.v, total),
        device.readF32(buffers.stats, 4),
      ]);
      expect(stats[3]).toBe(10);
      // Tolerances: each step's update (≤ ~lr = 1e-2) carries f32 rounding (~1e-6 relative) and
      // the f32 clip scale (1e-5 relative, see the grad-norm test); over 10 steps the parameters
      // (|p| ≲ 1) drift by ≲ 10·1e-2·1e-5 = 1e-6 from the float64-computed CPU twin. Moments
      // carry the clip scale's error through their (1 − β)·g terms (≲ 1e-5 of those terms, which
      // are ≤ 10% of the moment for m and 5% for v) plus ~3e-7 of rounding: ≲ 2e-6 of their scale.
      expect(maxAbsDiff(params, cpu.params)).toBeLessThan(5e-6);
      expect(maxScaledDiff(m, cpu.m)).toBeLessThan(2e-6);
      expect(maxScaledDiff(v, cpu.v)).toBeLessThan(2e-6);
      // The padding between tensors was never touched.
      for (const [a, b] of [
        [0, 64],
        [1064, 1088],
        [1165, total],
      ] as const) {
        expect(Array.from(params.subarray(a, b))).toEqual(Array.from(p0.subarray(a, b)));
      }
    } finally {
      for (const b of Object.values(buffers)) device.pool.release(b);
    }
  });

  it('skips the update after a non-finite gradient: params, m, v and the step stay put', async () => {
    const count = 300;
    const options: AdamWOptions = { lr: 0.05 };
    const buffers = {
      params: device.storage(count * 4, 'params'),
      grads: device.storage(count * 4, 'grads'),
      m: device.storage(count * 4, 'm'),
      v: device.storage(count * 4, 'v'),
      partials: device.storage(gradNormPartialsLength(count) * 4, 'partials'),
      stats: device.storage(16, 'stats'),
    };
    const step = async (grads: Float32Array) => {
      write(buffers.grads, 0, grads);
      const batch = device.beginBatch('adamw skip');
      await encodeGradNorm(device, batch, buffers, count, 1);
      await encodeAdamW(device, batch, buffers, count, options);
      batch.submit();
      const [p, m, v, stats] = await Promise.all(
        [buffers.params, buffers.m, buffers.v]
          .map((b) => device.readF32(b, count))
          .concat([device.readF32(buffers.stats, 4)]),
      );
      return { p: p!, m: m!, v: v!, stats: stats! };
    };
    try {
      write(buffers.params, 0, randomLogits(count, 1, 5));
      write(buffers.m, 0, new Float32Array(count));
      write(buffers.v, 0, new Float32Array(count));
      write(buffers.stats, 0, new Float32Array(4));
      const first = await step(randomLogits(count, 1, 6));
      expect(Array.from(first.stats.subarray(2))).toEqual([1, 1]);

      for (const bad of [NaN, Infinity]) {
        const grads = randomLogits(count, 1, 7);
        grads[123] = bad;
        const skipped = await step(grads);
        expect(Array.from(skipped.stats.subarray(1)), `${bad}`).toEqual([0, 0, 1]);
        expect(Array.from(skipped.p)).toEqual(Array.from(first.p));
        expect(Array.from(skipped.m)).toEqual(Array.from(first.m));
        expect(Array.from(skipped.v)).toEqual(Array.from(first.v));
      }

      // The next finite step is step 2 (bias corrections of t = 2), not 4.
      const grads = randomLogits(count, 1, 8);
      const next = await step(grads);
      expect(Array.from(next.stats.subarray(2))).toEqual([1, 2]);
      const cpu = { p: first.p.slice(), m: first.m.slice(), v: first.v.slice() };
      adamwStep(cpu.p, grads, cpu.m, cpu.v, 2, options, clipScale(gradNorm(grads), 1));
      expect(maxAbsDiff(next.p, cpu.p)).toBeLessThan(1e-6);
    } finally {
      for (const b of Object.values(buffers)) device.pool.release(b);
    }
  });

  it.each<[string, number, AdamWOptions]>([
    ['β1 = 0 (RMSProp-like), t = 1', 1, { lr: 1e-3, beta1: 0 }],
    ['t = 3, clip scale 0.25', 3, { lr: 1e-3, weightDecay: 0.1 }],
    ['t = 1000: β2^t far from 1 (exp path)', 1000, { lr: 1e-3 }],
    ['t = 100000', 100_000, { lr: 1e-3, beta2: 0.99999 }],
  ])('matches the CPU twin for one step: %s', async (_, step, options) => {
    const count = 777;
    const params = randomLogits(count, 1, step);
    const grads = randomLogits(count, 1, step + 1);
    // Moments as a run would have them: m ~ g, v ~ g² (kept positive).
    const m = randomLogits(count, 0.5, step + 2);
    const v = randomLogits(count, 0.5, step + 3).map((x) => x * x + 1e-6);
    const scale = step === 3 ? 0.25 : 1;
    const out = await adamwGpu(
      device,
      params,
      grads,
      m,
      v,
      new Float32Array([1, scale, 1, step]),
      options,
    );
    const cpu = { p: params.slice(), m: m.slice(), v: v.slice() };
    adamwStep(cpu.p, grads, cpu.m, cpu.v, step, options, scale);
    // One step moves p by ≲ lr·|m̂/√v̂| (≲ 1e-2 here); its f32 error is ~1e-6 of that, plus the
    // rounding of p itself (6e-8 near 1). Moments: β·m + (1 − β)·g rounds three times in f32
    // (once in the twin), ≲ 5·2^-24 ≈ 3e-7 of the tensor's scale.
    expect(maxAbsDiff(out.params, cpu.p)).toBeLessThan(2e-7);
    expect(maxScaledDiff(out.m, cpu.m)).toBeLessThan(3e-7);
    expect(maxScaledDiff(out.v, cpu.v)).toBeLessThan(3e-7);
  });

  it('rejects bad input before any dispatch', async () => {
    const created = device.pool.stats().created;
    const one = new Float32Array(1);
    const stats = new Float32Array([1, 1, 1, 1]);
    await expect(adamwGpu(device, one, one, one, one, stats, { lr: 0 })).rejects.toThrow(
      OpInputError,
    );
    await expect(
      adamwGpu(device, one, new Float32Array(2), one, one, stats, { lr: 1 }),
    ).rejects.toThrow(/grads must have params.length = 1/);
    await expect(
      adamwGpu(device, one, one, one, one, new Float32Array(3), { lr: 1 }),
    ).rejects.toThrow(/stats must have 4 elements/);
    expect(device.pool.stats().created).toBe(created);
  });
});
