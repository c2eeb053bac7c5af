/**
 * Log-softmax (kernels/log_softmax.wgsl) against its CPU reference and the copy ceiling. The
 * kernel writes the whole (N, V) result, so its bytes are a read and a write of the logits.
 */
import type { GpuContext } from '../../src/gpu/context';
import { encodeLogSoftmax } from '../../src/gpu/kernels/log-softmax';
import { logSoftmax } from '../../src/ops/log-softmax';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { uniformF32 } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, settleQuietly, timeOnce, type RepPolicy, type Runner } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement } from '../core/types';
import { COPY_IMPL, COPY_TIMING, measureCopy } from './copy-ceiling';

const KERNEL = 'log_softmax.wgsl';
const CPU = 'CPU reference (JS, f64)';

/** [N, V, max reps]; 4096 × 32768 is left to the token-logprobs suite (same traffic, slower). */
function shapes(quick: boolean): [number, number, number][] {
  if (quick) return [[512, 64, 3]];
  return [
    [4096, 64, 7],
    [4096, 4096, 5],
    [512, 32768, 5],
  ];
}

export const logSoftmaxSuite: BenchSuite = {
  name: 'log-softmax',
  async run(ctx: BenchContext) {
    const measurements: Measurement[] = [];
    for (const [N, V, max] of shapes(ctx.options.quick)) {
      measurements.push(...(await benchShape(ctx, N, V, { max, budgetMs: 6000 })));
    }
    return {
      suite: 'log-softmax',
      title: 'log_softmax: logits (N, V) f32 → log-probs (N, V)',
      baseline: KERNEL,
      ceiling: COPY_IMPL,
      notes: [
        `${KERNEL}: validated against the CPU reference first; timed wall clock from submit until a 16-byte readback of the output arrives (the output stays resident); GPU ms from timestamp queries.`,
        `${CPU}: one call of logSoftmax (src/ops/log-softmax.ts).`,
        COPY_TIMING,
        'GB/s counts a read and a write of the logits (2·N·V·4 bytes) for every row.',
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
  const bytes = 2 * N * V * 4;
  const logits = uniformF32(N * V, 10, N + V);
  const { value: expected, ms: cpuMs } = timeOnce(() => logSoftmax(logits, N, V));
  await settleQuietly(ctx);
  const input = gpu.upload(logits, 'bench logits');
  try {
    const kernel = await measure({
      impl: KERNEL,
      shape,
      bytes,
      reps,
      tolerance: 1e-4,
      log,
      error: (out: Float32Array) => maxAbsDiff(out, expected),
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

async function kernelRunner(
  gpu: GpuContext,
  logits: GPUBuffer,
  N: number,
  V: number,
): Promise<Runner<Float32Array>> {
  const out = gpu.storage(N * V * 4, 'bench log-probs');
  let validated = false;
  const encode = (batch: ReturnType<GpuContext['beginBatch']>) =>
    encodeLogSoftmax(gpu, batch, { logits, out }, N, V);
  return {
    run: async () => {
      const batch = gpu.beginBatch('bench log_softmax');
      await encode(batch);
      batch.submit();
      // Validation reads the whole output once; timed launches read 16 bytes.
      if (!validated) {
        validated = true;
        return gpu.readF32(out, N * V);
      }
      return gpu.readF32(out, 4);
    },
    gpuTime: () => gpuTimeOf(gpu, 'bench log_softmax', encode),
    dispose: () => gpu.pool.release(out),
  };
}
