/**
 * Sampling over a real model's vocabulary (kernels/nn/sample_large.wgsl) against its CPU twin and
 * the copy ceiling: one generation step's token choice at SmolLM2's V = 49,152, for one row
 * (batch 1 decode) and 64 rows. The kernel makes ≤ 34 passes over each row (13 here: top-k 50 moves
 * the kept tokens to workgroup memory) (threshold searches
 * instead of a sort), so its GB/s, counted for ONE read of the logits, shows how far those passes
 * are from a single read.
 */
import type { GpuContext } from '../../src/gpu/context';
import { encodeSampleLarge } from '../../src/gpu/kernels/nn/sample-large';
import { type SampleOptions, type Sampled, sampleTokensAnyVocab } from '../../src/ops/nn/sample';
import { uniformF32 } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, settleQuietly, timeOnce, type RepPolicy, type Runner } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement } from '../core/types';
import { COPY_IMPL, COPY_TIMING, measureCopy } from './copy-ceiling';

const KERNEL = 'sample_large.wgsl';
const CPU = 'CPU twin (JS, f64 sums, sort per row)';
/** A typical chat setting: every stage of the kernel runs (top-k search, top-p search, draw). */
const OPTIONS: SampleOptions = { temperature: 0.7, topK: 50, topP: 0.9 };
const SEED = 7;
const STEP = 3;

/** [rows, V, max reps]. */
function shapes(quick: boolean): [number, number, number][] {
  if (quick) return [[1, 4096, 3]];
  return [
    [1, 49_152, 7],
    [64, 49_152, 5],
  ];
}

export const sampleLargeSuite: BenchSuite = {
  name: 'sample-large',
  async run(ctx: BenchContext) {
    const measurements: Measurement[] = [];
    for (const [N, V, max] of shapes(ctx.options.quick)) {
      measurements.push(...(await benchShape(ctx, N, V, { max, budgetMs: 4000 })));
    }
    return {
      suite: 'sample-large',
      title: `sample_large: logits (N, V) f32 → token + log-prob per row (${JSON.stringify(OPTIONS)})`,
      baseline: KERNEL,
      ceiling: COPY_IMPL,
      notes: [
        `${KERNEL}: validated against the CPU twin first (the error is the fraction of rows whose token differs; f32 sums may flip a row whose u lies within ~1e-6 of a boundary); timed wall clock from submit until the tokens arrive; GPU ms from timestamp queries.`,
        `${CPU}: one call of sampleTokensAnyVocab (src/ops/nn/sample.ts).`,
        COPY_TIMING,
        'GB/s counts ONE read of the logits (N·V·4 bytes); the kernel reads each row up to 34 times.',
      ],
      measurements,
    };
  },
};

async function benchShape(
  ctx: BenchContext,
  N: number,
  V: number,
  reps: RepPolicy,
): Promise<Measurement[]> {
  const { gpu, log } = ctx;
  const shape = { N, V };
  const bytes = N * V * 4;
  const logits = uniformF32(N * V, 8, N + V);
  const { value: expected, ms: cpuMs } = timeOnce(() =>
    sampleTokensAnyVocab(logits, N, V, OPTIONS, SEED, STEP),
  );
  await settleQuietly(ctx);
  const input = gpu.upload(logits, 'bench logits');
  try {
    const kernel = await measure({
      impl: KERNEL,
      shape,
      bytes,
      reps,
      tolerance: 0.05,
      log,
      error: (tokens: Int32Array) => differingFraction(tokens, expected),
      prepare: () => kernelRunner(gpu, input, N, V),
    });
    const copy = await measureCopy(gpu, input, logits, shape, reps, log);
    const cpu: Measurement = { impl: CPU, shape, bytes, status: 'ok', ms: cpuMs, samples: [cpuMs] };
    return [kernel, copy, cpu];
  } finally {
    gpu.pool.release(input);
    gpu.pool.trim();
  }
}

/** Fraction of rows whose token differs from the CPU twin's. */
function differingFraction(tokens: Int32Array, expected: Sampled): number {
  let differing = 0;
  expected.tokens.forEach((t, r) => {
    if (tokens[r] !== t) differing += 1;
  });
  return differing / expected.tokens.length;
}

async function kernelRunner(
  gpu: GpuContext,
  logits: GPUBuffer,
  N: number,
  V: number,
): Promise<Runner<Int32Array>> {
  const tokens = gpu.storage(N * 4, 'bench tokens');
  const logprobs = gpu.storage(N * 4, 'bench logprobs');
  const encode = (batch: ReturnType<GpuContext['beginBatch']>) =>
    encodeSampleLarge(gpu, batch, { logits, tokens, logprobs }, N, V, OPTIONS, SEED, STEP);
  return {
    run: async () => {
      const batch = gpu.beginBatch('bench sample_large');
      await encode(batch);
      batch.submit();
      // The tokens are what a generation step reads back (or keeps resident): N · 4 bytes.
      return new Int32Array(await gpu.read(tokens, N * 4));
    },
    gpuTime: () => gpuTimeOf(gpu, 'bench sample_large', encode),
    dispose: () => {
      gpu.pool.release(tokens);
      gpu.pool.release(logprobs);
    },
  };
}
