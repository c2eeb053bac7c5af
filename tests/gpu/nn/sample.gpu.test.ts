/** Parity of kernels/nn/sample.wgsl with its CPU twin; runs in Node (Dawn) and in Chromium. */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../../src/gpu/context';
import { encodeSample, sampleGpu, sampleKernel } from '../../../src/gpu/kernels/nn/sample';
import { PooledBuffers } from '../../../src/gpu/kernels/run-convenience';
import { OpInputError } from '../../../src/ops/errors';
import {
  type SampleOptions,
  type Sampled,
  checkSampleOptions,
  sampleTokens,
  samplingDistribution,
} from '../../../src/ops/nn/sample';
import { counterUniform } from '../../../src/util/counter-rng';
import { testGpu } from '../../support/gpu';
import { randomLogits } from '../../support/random';

const gpu = await testGpu();

/** Distance from u to the nearest cumulative-probability boundary of the CPU's final distribution. */
function boundaryDistance(
  logits: Float32Array,
  row: number,
  vocab: number,
  options: SampleOptions,
  u: number,
): number {
  const dist = samplingDistribution(logits, row, vocab, checkSampleOptions(options));
  let cumulative = 0;
  let nearest = Infinity;
  for (const lp of dist.logProbs) {
    cumulative += Math.exp(lp);
    nearest = Math.min(nearest, Math.abs(cumulative - u));
  }
  return nearest;
}

/**
 * Compares GPU and CPU results row by row. Tolerances: the GPU computes e = exp((l − max) / T),
 * its scan and the threshold u · Σe in f32 (relative error ~1e-6 over ≤ 1024 terms), the CPU in
 * float64; so the picked tokens may differ only where u lies within ~1e-6 of a cumulative boundary
 * (1e-4 allowed), and equal tokens' log-probs ((l − max) / T − log Σe, |·| ≲ 20) agree to ~1e-6
 * (1e-5 allowed).
 */
function compare(
  gpuResult: Sampled,
  cpu: Sampled,
  logits: Float32Array,
  vocab: number,
  options: SampleOptions,
  seed: number,
  step: number,
): { rows: number; differing: number; problems: string[] } {
  const rows = cpu.tokens.length;
  const problems: string[] = [];
  let differing = 0;
  for (let r = 0; r < rows; r++) {
    if (gpuResult.tokens[r] === cpu.tokens[r]) {
      const diff = Math.abs(gpuResult.logprobs[r]! - cpu.logprobs[r]!);
      if (!(diff <= 1e-5))
        problems.push(`row ${r}: logprob ${gpuResult.logprobs[r]} vs ${cpu.logprobs[r]}`);
      continue;
    }
    differing += 1;
    const u = counterUniform(seed, step, r);
    const distance = boundaryDistance(logits, r, vocab, options, u);
    if (!(distance < 1e-4)) {
      problems.push(
        `row ${r}: token ${gpuResult.tokens[r]} vs ${cpu.tokens[r]}, u ${u} is ${distance} from a boundary`,
      );
    }
  }
  return { rows, differing, problems };
}

interface Case {
  logits: Float32Array;
  options: SampleOptions;
  seed: number;
  step: number;
}

/** Runs many sampling calls as dispatches of one batch, read back together (one sync point). */
async function sampleBatch(
  device: GpuContext,
  cases: Case[],
  rows: number,
  vocab: number,
): Promise<Sampled[]> {
  const pooled = new PooledBuffers(device);
  try {
    const batch = device.beginBatch('sample cases');
    const outputs: { tokens: GPUBuffer; logprobs: GPUBuffer }[] = [];
    for (const { logits, options, seed, step } of cases) {
      const buffers = {
        logits: pooled.upload(logits, 'logits'),
        tokens: pooled.storage(rows, 'tokens'),
        logprobs: pooled.storage(rows, 'logprobs'),
      };
      await encodeSample(device, batch, buffers, rows, vocab, options, seed, step);
      outputs.push(buffers);
    }
    batch.submit();
    return await Promise.all(
      outputs.map(async ({ tokens, logprobs }) => ({
        tokens: new Int32Array(await device.read(tokens, rows * 4)),
        logprobs: await device.readF32(logprobs, rows),
      })),
    );
  } finally {
    pooled.release();
  }
}

const TEMPERATURES = [0.6, 1, 1.8];
const TOP_KS = [0, 1, 5, 50];
const TOP_PS = [1, 0.9, 0.4];
/** Greedy, then every (temperature, top-k, top-p) combination. */
const ALL_OPTIONS: SampleOptions[] = [
  { temperature: 0 },
  ...TEMPERATURES.flatMap((temperature) =>
    TOP_KS.flatMap((topK) => TOP_PS.map((topP) => ({ temperature, topK, topP }))),
  ),
];

describe.skipIf(!gpu)('sample kernel vs CPU twin', () => {
  const device = gpu!;

  it.each([7, 64, 256, 1000])(
    'at V = %i, picks the CPU twin’s token in ≥ 99 of 100 rows over all option combinations',
    async (vocab) => {
      const rows = vocab === 1000 ? 4 : vocab === 256 ? 8 : 24;
      // Every option combination with its own logits, seed and step, all in one submission.
      const cases = ALL_OPTIONS.map((options, i) => {
        const logits = randomLogits(rows * vocab, 3, i * 7 + vocab);
        if (i % 2 === 1) logits.forEach((v, j) => (logits[j] = Math.round(v * 2) / 2)); // ties
        return { logits, options, seed: 1000 + i, step: vocab + i };
      });
      const outs = await sampleBatch(device, cases, rows, vocab);
      let total = 0;
      let differing = 0;
      const problems: string[] = [];
      cases.forEach(({ logits, options, seed, step }, i) => {
        const cpu = sampleTokens(logits, rows, vocab, options, seed, step);
        const result = compare(outs[i]!, cpu, logits, vocab, options, seed, step);
        total += result.rows;
        differing += result.differing;
        problems.push(...result.problems.map((p) => `${JSON.stringify(options)} ${p}`));
      });
      expect(problems.slice(0, 5)).toEqual([]);
      expect(differing / total).toBeLessThanOrEqual(0.01);
    },
  );

  it('greedy picks the argmax with ties to the lower index, logprob 0', async () => {
    // Row 0: max 3 at indices 1 and 2 → 1. Row 1: max 5 at index 3. Row 2: all equal → 0.
    const logits = new Float32Array([1, 3, 3, 2, -1, 0, 4, 5, 2, 2, 2, 2]);
    const out = await sampleGpu(device, logits, 3, 4, { temperature: 0, topK: 2 }, 9, 9);
    expect(Array.from(out.tokens)).toEqual([1, 3, 0]);
    expect(Array.from(out.logprobs)).toEqual([0, 0, 0]);
  });

  it('gives the CPU twin’s tokens with every workgroup size', async () => {
    // V = 1 and 7 leave most threads without a position (P < threads); V = 100 gives each thread
    // several. Each size once: on SwiftShader every (size, P) pipeline costs a compile of up to
    // seconds (V = 1000, the largest sort, is compiled above for the default size only).
    const options = { temperature: 0.9, topK: 40, topP: 0.95 };
    const cases = [
      [1, 64],
      [7, 256],
      [100, 32],
      [100, 128],
    ] as const;
    for (const [vocab, workgroupSize] of cases) {
      const rows = 6;
      const logits = randomLogits(rows * vocab, 2, vocab);
      const cpu = sampleTokens(logits, rows, vocab, options, 5, 6);
      const out = await sampleGpu(device, logits, rows, vocab, { ...options, workgroupSize }, 5, 6);
      const result = compare(out, cpu, logits, vocab, options, 5, 6);
      expect(result.problems, `V ${vocab}, ${workgroupSize} threads`).toEqual([]);
      expect(result.differing).toBeLessThanOrEqual(1);
    }
  });

  it('reads and writes 256-byte-aligned slices of bigger buffers', async () => {
    const rows = 5;
    const vocab = 70;
    const logits = randomLogits(rows * vocab, 2, 31);
    const options = { temperature: 1.2, topP: 0.8 };
    const cpu = sampleTokens(logits, rows, vocab, options, 77, 3);
    // logits at float 128 (512 bytes) of a 1024-float buffer; tokens and logprobs at 256 and 512
    // bytes of one 256-float buffer (disjoint ranges of one buffer, both written).
    const big = device.storage(1024 * 4, 'big logits');
    const out = device.storage(256 * 4, 'outputs');
    try {
      device.device.queue.writeBuffer(
        big,
        512,
        logits.buffer,
        logits.byteOffset,
        logits.byteLength,
      );
      device.device.queue.writeBuffer(out, 0, new Float32Array(256).fill(-7));
      const batch = device.beginBatch('sample slices');
      await encodeSample(
        device,
        batch,
        {
          logits: { buffer: big, offset: 512, size: rows * vocab * 4 },
          tokens: { buffer: out, offset: 256, size: rows * 4 },
          logprobs: { buffer: out, offset: 512, size: rows * 4 },
        },
        rows,
        vocab,
        options,
        77,
        3,
      );
      batch.submit();
      const bytes = await device.read(out, 256 * 4);
      const tokens = new Int32Array(bytes, 256, rows);
      const logprobs = new Float32Array(bytes, 512, rows);
      const result = compare({ tokens, logprobs }, cpu, logits, vocab, options, 77, 3);
      expect(result.problems).toEqual([]);
      expect(result.differing).toBe(0);
      // Nothing outside the slices was touched.
      const all = new Float32Array(bytes);
      expect(all[63]).toBe(-7);
      expect(all[64 + rows]).toBe(-7);
      expect(all[128 + rows]).toBe(-7);
    } finally {
      device.pool.release(big);
      device.pool.release(out);
    }
  });

  it('finds its row on a 2D grid (rows = wid.x + wid.y · groups.x) and skips spare workgroups', async () => {
    // encodeSample spreads rows over (x, y) with workgroupGrid() only past 65,535 rows; that many
    // workgroups take tens of seconds on SwiftShader, so this dispatches the kernel itself on a
    // 3 × 2 grid for 5 rows (the sixth workgroup must write nothing).
    const rows = 5;
    const vocab = 40;
    const logits = randomLogits(rows * vocab, 2, 21);
    const options = { temperature: 0.8, topK: 10 };
    const cpu = sampleTokens(logits, rows, vocab, options, 8, 9);
    const pooled = new PooledBuffers(device);
    try {
      const sentinel = new Float32Array(rows + 1).fill(-7);
      const buffers = {
        logits: pooled.upload(logits, 'logits'),
        tokens: pooled.upload(sentinel, 'tokens'),
        logprobs: pooled.upload(sentinel, 'logprobs'),
      };
      const batch = device.beginBatch('sample 2D grid');
      batch.dispatch(sampleKernel, {
        pipeline: await device.pipelines.get(sampleKernel, { WORKGROUP_SIZE: 32, PADDED: 64 }),
        buffers,
        uniforms: { rows, vocab, kept: 10, seed: 8, step: 9, temperature: 0.8, top_p: 1 },
        workgroups: [3, 2],
      });
      batch.submit();
      const [tokenBytes, logprobs] = await Promise.all([
        device.read(buffers.tokens, (rows + 1) * 4),
        device.readF32(buffers.logprobs, rows + 1),
      ]);
      const tokens = new Int32Array(tokenBytes);
      const result = compare(
        { tokens: tokens.subarray(0, rows), logprobs: logprobs.subarray(0, rows) },
        cpu,
        logits,
        vocab,
        options,
        8,
        9,
      );
      expect(result.problems).toEqual([]);
      expect(result.differing).toBe(0);
      expect(new Float32Array(tokenBytes)[rows]).toBe(-7);
      expect(logprobs[rows]).toBe(-7);
    } finally {
      pooled.release();
    }
  });

  it('rejects the same bad options as the CPU twin, before any allocation', async () => {
    const created = device.pool.stats().created;
    const logits = new Float32Array(6);
    await expect(sampleGpu(device, logits, 2, 3, { topP: 0 }, 0, 0)).rejects.toThrow(OpInputError);
    await expect(sampleGpu(device, logits, 2, 3, { topK: -2 }, 0, 0)).rejects.toThrow(
      /topK must be/,
    );
    await expect(sampleGpu(device, logits, 2, 3, { temperature: -1 }, 0, 0)).rejects.toThrow(
      /temperature must be in \[0, ∞\)/,
    );
    await expect(sampleGpu(device, new Float32Array(5), 2, 3, {}, 0, 0)).rejects.toThrow(
      /rows × vocab = 2 × 3 = 6 elements, got 5/,
    );
    await expect(sampleGpu(device, new Float32Array(1025), 1, 1025, {}, 0, 0)).rejects.toThrow(
      /vocab must be an integer in \[1, 1024\]/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
