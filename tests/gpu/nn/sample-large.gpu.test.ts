/**
 * Parity of kernels/nn/sample_large.wgsl (sampling over real vocabularies, no sort) with its CPU
 * twin sampleTokensAnyVocab(); runs in Node (Dawn) and in Chromium. On SwiftShader a row of
 * V = 151,936 costs about 0.3 s of GPU time (≤ 34 passes over it) and 0.2 s on the CPU, so the
 * large-V cases use few rows each but many option combinations, seeds and steps.
 */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../../src/gpu/context';
import {
  encodeSampleLarge,
  sampleLargeGpu,
  sampleLargeKernel,
} from '../../../src/gpu/kernels/nn/sample-large';
import { PooledBuffers } from '../../../src/gpu/kernels/run-convenience';
import { OpInputError } from '../../../src/ops/errors';
import {
  type SampleOptions,
  type Sampled,
  checkSampleOptions,
  sampleTokensAnyVocab,
  samplingDistribution,
} from '../../../src/ops/nn/sample';
import { counterHash, counterUniform } from '../../../src/util/counter-rng';
import { IN_BROWSER, testGpu } from '../../support/gpu';
import { randomLogits, seededRandom } from '../../support/random';

const gpu = await testGpu();

/**
 * How close the CPU's float64 computation of row `row` lies to a decision boundary the GPU's f32
 * sums could put on the other side: the distance of u to the nearest cumulative q of the final
 * distribution, and (with top-p) the relative distance of the nearest cumulative p of the kept
 * tokens to topP.
 */
function boundaryDistance(
  logits: Float32Array,
  row: number,
  vocab: number,
  options: SampleOptions,
  u: number,
): number {
  const resolved = checkSampleOptions(options);
  const dist = samplingDistribution(logits, row, vocab, resolved);
  let cumulative = 0;
  let nearest = Infinity;
  for (const lp of dist.logProbs) {
    cumulative += Math.exp(lp);
    nearest = Math.min(nearest, Math.abs(cumulative - u));
  }
  if (resolved.topP < 1) {
    const kept = samplingDistribution(logits, row, vocab, { ...resolved, topP: 1 });
    let mass = 0;
    for (const lp of kept.logProbs) {
      mass += Math.exp(lp);
      nearest = Math.min(nearest, Math.abs(mass - resolved.topP) / resolved.topP);
    }
  }
  return nearest;
}

/**
 * Compares GPU and CPU results row by row. The GPU computes e = exp((l − max) / T) in f32 (WGSL
 * allows exp an error of 3 + 2|x| ulp) and sums it in f32 (per-thread strided sums, then a tree),
 * the CPU in float64; measured on SwiftShader over 49,152 and 151,936 terms, Z agrees to ≤ 1.5e-5
 * relative. So a token may differ only where u or a top-p cumulative lies near a boundary (1e-4
 * allowed), and equal tokens' log-probs ((l − max) / T − log Z) agree to 5e-5.
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
      if (!(diff <= 5e-5))
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

type RowKind = 'random' | 'ties' | 'masked' | 'dominant';
const ROW_KINDS: RowKind[] = ['random', 'ties', 'masked', 'dominant'];

/**
 * One row of V logits of a kind: random in [−3, 3]; ties (integers −3 … 3, so every threshold
 * lands inside thousands of equal logits); masked (9 of 10 tokens −∞); dominant (one logit 12
 * above the rest in [−1, 1]).
 */
function makeRow(kind: RowKind, vocab: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const row = randomLogits(vocab, 3, seed);
  if (kind === 'ties') row.forEach((v, i) => (row[i] = Math.round(v)));
  if (kind === 'masked') {
    row.forEach((_, i) => {
      if (next() < 0.9) row[i] = -Infinity;
    });
    row[Math.floor(next() * vocab)] = 1; // at least one finite logit
  }
  if (kind === 'dominant') {
    row.forEach((v, i) => (row[i] = v / 3));
    row[Math.floor(next() * vocab)] = 12;
  }
  return row;
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
    const batch = device.beginBatch('sample-large cases');
    const outputs: { tokens: GPUBuffer; logprobs: GPUBuffer }[] = [];
    for (const { logits, options, seed, step } of cases) {
      const buffers = {
        logits: pooled.upload(logits, 'logits'),
        tokens: pooled.storage(rows, 'tokens'),
        logprobs: pooled.storage(rows, 'logprobs'),
      };
      await encodeSampleLarge(device, batch, buffers, rows, vocab, options, seed, step);
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

/** Greedy, then temperatures 0.3 / 1 / 2 with no truncation, top-k only, top-p only and both. */
const ALL_OPTIONS: SampleOptions[] = [
  { temperature: 0 },
  ...[0.3, 1, 2].flatMap((temperature) => [
    { temperature },
    { temperature, topK: 50 },
    { temperature, topP: 0.9 },
    { temperature, topK: 1000, topP: 0.7 },
  ]),
];

const SLOW = 180_000;

describe.skipIf(!gpu)('sample-large kernel vs CPU twin', () => {
  const device = gpu!;

  // In the browser, the smallest vocabulary: the larger ones run the same pipeline (IN_BROWSER).
  it.each<[number, number]>([
    [1000, 16],
    ...(IN_BROWSER
      ? []
      : ([
          [49_152, 4],
          [151_936, 2],
        ] as [number, number][])),
  ])(
    'at V = %i (%i rows per case), picks the CPU twin’s token in ≥ 99% of rows over all options and row kinds',
    async (vocab, rows) => {
      // Every option combination with its own rows, seed and step; row kinds rotate so that each
      // combination meets each kind across the three vocabularies.
      const cases = ALL_OPTIONS.map((options, i) => {
        const logits = new Float32Array(rows * vocab);
        for (let r = 0; r < rows; r++) {
          const kind = ROW_KINDS[(i + r) % ROW_KINDS.length]!;
          logits.set(makeRow(kind, vocab, vocab + 97 * i + r), r * vocab);
        }
        return { logits, options, seed: 1000 + i, step: vocab + 31 * i };
      });
      const outs = await sampleBatch(device, cases, rows, vocab);
      let total = 0;
      let differing = 0;
      const problems: string[] = [];
      cases.forEach(({ logits, options, seed, step }, i) => {
        const cpu = sampleTokensAnyVocab(logits, rows, vocab, options, seed, step);
        const result = compare(outs[i]!, cpu, logits, vocab, options, seed, step);
        total += result.rows;
        differing += result.differing;
        problems.push(...result.problems.map((p) => `${JSON.stringify(options)} ${p}`));
      });
      expect(problems.slice(0, 5)).toEqual([]);
      expect(differing / total).toBeLessThanOrEqual(0.01);
    },
    SLOW,
  );

  it('greedy picks the argmax with ties to the lower index past −∞ masks, logprob 0', async () => {
    const vocab = 151_936;
    const rows = 3;
    const logits = randomLogits(rows * vocab, 3, 5);
    // Row 0: 7 at 150,000 and at 100,000 → 100,000. Row 1: all −∞ but index 151,935.
    // Row 2: −0 and +0 tie as the maximum of a negative row → the lower index, 20.
    logits[150_000] = 7;
    logits[100_000] = 7;
    logits.fill(-Infinity, vocab, 2 * vocab - 1);
    logits[2 * vocab - 1] = -50;
    for (let i = 2 * vocab; i < 3 * vocab; i++) logits[i] = -1 - Math.abs(logits[i]!);
    logits[2 * vocab + 20] = -0;
    logits[2 * vocab + 30] = 0;
    const out = await sampleLargeGpu(device, logits, rows, vocab, { temperature: 0 }, 1, 2);
    expect(Array.from(out.tokens)).toEqual([100_000, 151_935, 20]);
    expect(Array.from(out.logprobs)).toEqual([0, 0, 0]);
  });

  it('over equal logits, top-k and −∞ masks keep the tokens by index: token = floor(n · u)', async () => {
    // Every kept token has q = 1/n, so the draw is the (floor(n · u) + 1)-th kept token, an
    // expectation from the counter hash alone (h · n < 2^53 is exact). Row 0: V equal logits,
    // top-k 5 → n = 5 of indices 0–4. Row 1: −∞ but every 1000th index, no top-k → n = 152 of
    // indices 0, 1000, …. Row 2: equal, top-k 7 → n = 7. log q = −log n.
    const vocab = 151_936;
    const logits = new Float32Array(3 * vocab).fill(2.5);
    logits.fill(-Infinity, vocab, 2 * vocab);
    for (let i = 0; i < vocab; i += 1000) logits[vocab + i] = 2.5;
    const seed = 42;
    const step = 7;
    const expected = (n: number, r: number, stride: number): number =>
      Math.floor(((counterHash(seed, step, r) >>> 8) * n) / 2 ** 24) * stride;
    const topK5 = await sampleLargeGpu(device, logits, 3, vocab, { topK: 5 }, seed, step);
    expect(topK5.tokens[0]).toBe(expected(5, 0, 1));
    expect(topK5.logprobs[0]).toBeCloseTo(-Math.log(5), 6);
    const open = await sampleLargeGpu(device, logits, 3, vocab, { temperature: 0.5 }, seed, step);
    expect(open.tokens[1]).toBe(expected(152, 1, 1000));
    expect(open.logprobs[1]).toBeCloseTo(-Math.log(152), 5);
    const topK7 = await sampleLargeGpu(device, logits, 3, vocab, { topK: 7 }, seed, step);
    expect(topK7.tokens[2]).toBe(expected(7, 2, 1));
    expect(topK7.logprobs[2]).toBeCloseTo(-Math.log(7), 6);
  });

  it.skipIf(IN_BROWSER)(
    'draws one row’s tokens with the CPU distribution’s frequencies (χ² bound)',
    async () => {
      // One row of V = 1000 repeated over 1024 rows: each row draws with its own u, so the rows are
      // 1024 independent draws. Bins: tokens with expected count ≥ 5, the rest pooled. Pearson's
      // χ² with d = bins − 1 degrees of freedom has mean d and s.d. √(2d); the bound d + 5√(2d)
      // is about 5 s.d. (a fixed seed, so the outcome is reproducible either way).
      const vocab = 1000;
      const rows = 1024;
      const options = { temperature: 0.8, topK: 200, topP: 0.95 };
      const row = randomLogits(vocab, 4, 77);
      const logits = new Float32Array(rows * vocab);
      for (let r = 0; r < rows; r++) logits.set(row, r * vocab);
      const out = await sampleLargeGpu(device, logits, rows, vocab, options, 2024, 3);
      const dist = samplingDistribution(row, 0, vocab, checkSampleOptions(options));
      const position = new Map(Array.from(dist.tokens, (t, j) => [t, j]));
      const counts = new Array<number>(dist.tokens.length).fill(0);
      for (const t of out.tokens) {
        const j = position.get(t);
        expect(j, `token ${t} outside the final set`).toBeDefined();
        counts[j!]! += 1;
      }
      const probs = Array.from(dist.logProbs, Math.exp);
      let chi = 0;
      let bins = 0;
      let pooledObserved = 0;
      let pooledExpected = 0;
      probs.forEach((p, j) => {
        const e = p * rows;
        if (e >= 5) {
          chi += (counts[j]! - e) ** 2 / e;
          bins += 1;
        } else {
          pooledObserved += counts[j]!;
          pooledExpected += e;
        }
      });
      if (pooledExpected > 0) {
        chi += (pooledObserved - pooledExpected) ** 2 / pooledExpected;
        bins += 1;
      }
      const d = bins - 1;
      expect(d).toBeGreaterThan(20);
      expect(chi).toBeLessThan(d + 5 * Math.sqrt(2 * d));
    },
    SLOW,
  );

  it(
    'gives the CPU twin’s tokens with every workgroup size',
    async () => {
      // V = 1031: a prime, so the last busy thread's chunk is short and, at 256 threads (chunks of
      // 5), the last 49 threads own nothing. Kept small: 256 threads on SwiftShader cost seconds
      // per row of a real vocabulary.
      const vocab = 1031;
      const rows = 4;
      const options = { temperature: 0.9, topK: 40, topP: 0.95 };
      for (const workgroupSize of [32, 64, 128, 256] as const) {
        const logits = new Float32Array(rows * vocab);
        for (let r = 0; r < rows; r++) {
          logits.set(makeRow(ROW_KINDS[r]!, vocab, workgroupSize + r), r * vocab);
        }
        const cpu = sampleTokensAnyVocab(logits, rows, vocab, options, 5, 6);
        const out = await sampleLargeGpu(
          device,
          logits,
          rows,
          vocab,
          { ...options, workgroupSize },
          5,
          6,
        );
        const result = compare(out, cpu, logits, vocab, options, 5, 6);
        expect(result.problems, `${workgroupSize} threads`).toEqual([]);
        expect(result.differing, `${workgroupSize} threads`).toBe(0);
      }
    },
    SLOW,
  );

  it('reads and writes 256-byte-aligned slices of bigger buffers', async () => {
    const rows = 3;
    const vocab = 2000;
    const logits = randomLogits(rows * vocab, 2, 31);
    const options = { temperature: 1.2, topP: 0.8 };
    const cpu = sampleTokensAnyVocab(logits, rows, vocab, options, 77, 3);
    // logits at float 128 (512 bytes) of a bigger buffer; tokens and logprobs at 256 and 512 bytes
    // of one 256-float buffer (disjoint ranges of one buffer, both written).
    const big = device.storage((128 + rows * vocab + 64) * 4, 'big logits');
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
      const batch = device.beginBatch('sample-large slices');
      await encodeSampleLarge(
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
    const rows = 5;
    const vocab = 3000;
    const logits = randomLogits(rows * vocab, 2, 21);
    const options = { temperature: 0.8, topK: 10 };
    const cpu = sampleTokensAnyVocab(logits, rows, vocab, options, 8, 9);
    const pooled = new PooledBuffers(device);
    try {
      const sentinel = new Float32Array(rows + 1).fill(-7);
      const buffers = {
        logits: pooled.upload(logits, 'logits'),
        tokens: pooled.upload(sentinel, 'tokens'),
        logprobs: pooled.upload(sentinel, 'logprobs'),
      };
      const batch = device.beginBatch('sample-large 2D grid');
      batch.dispatch(sampleLargeKernel, {
        pipeline: await device.pipelines.get(sampleLargeKernel, { WORKGROUP_SIZE: 32 }),
        buffers: { ...buffers, draw_rows: buffers.logits },
        uniforms: {
          rows,
          vocab,
          kept: 10,
          seed: 8,
          step: 9,
          temperature: 0.8,
          top_p: 1,
          first_row: 0,
          has_draw_rows: 0,
        },
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

  it('rejects bad input with the field and its range, before any allocation', async () => {
    const created = device.pool.stats().created;
    const logits = new Float32Array(6);
    await expect(sampleLargeGpu(device, logits, 2, 3, { topP: 0 }, 0, 0)).rejects.toThrow(
      OpInputError,
    );
    await expect(sampleLargeGpu(device, logits, 2, 3, { topP: 0 }, 0, 0)).rejects.toThrow(
      /sampleTokensAnyVocab: topP must be in \(0, 1\], got 0/,
    );
    await expect(sampleLargeGpu(device, logits, 2, 3, { topK: 1.5 }, 0, 0)).rejects.toThrow(
      /topK must be/,
    );
    await expect(sampleLargeGpu(device, logits, 2, 3, { temperature: -1 }, 0, 0)).rejects.toThrow(
      /temperature must be in \[0, ∞\)/,
    );
    await expect(sampleLargeGpu(device, new Float32Array(5), 2, 3, {}, 0, 0)).rejects.toThrow(
      /logits must have rows × vocab = 2 × 3 = 6 elements, got 5/,
    );
    await expect(sampleLargeGpu(device, logits, 1, 2 ** 20 + 1, {}, 0, 0)).rejects.toThrow(
      /vocab must be an integer in \[1, 1048576\], got 1048577/,
    );
    await expect(sampleLargeGpu(device, logits, 2, 3, {}, 2 ** 32, 0)).rejects.toThrow(
      /seed must be an integer in \[0, 4294967295\]/,
    );
    await expect(
      sampleLargeGpu(device, logits, 2, 3, { workgroupSize: 48 as 32 }, 0, 0),
    ).rejects.toThrow(/workgroupSize must be one of 32, 64, 128, 256, got 48/);
    expect(device.pool.stats().created).toBe(created);
  });
});
