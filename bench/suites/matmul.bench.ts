/**
 * Matrix products of a linear layer (kernels/nn/matmul.wgsl) against the CPU reference, on the
 * three products of one training step of a (rows, inDim) → outDim layer: y = x·Wᵀ (transB),
 * dx = dy·W, dW = dyᵀ·x (transA). rows = B·T = 4096 tokens, inDim = outDim = 256. The CPU side
 * has two rows: matmul() as the CPU fallback runs it (the WebAssembly SIMD kernel of
 * src/ops/nn/matmul-simd.ts) and its plain JavaScript loops, whose output it must equal bit for bit.
 */
import type { GpuContext } from '../../src/gpu/context';
import { encodeMatmul } from '../../src/gpu/kernels/nn/matmul';
import { matmul, matmulLoops, type MatmulShape } from '../../src/ops/nn/matmul';
import { simdKernel } from '../../src/ops/nn/matmul-simd';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { uniformF32 } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { median } from '../core/stats';
import { measure, settleQuietly, timeOnce, type RepPolicy, type Runner } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement } from '../core/types';

const KERNEL = 'matmul.wgsl (64×64 tiles, 4×4 per thread)';
const CPU_SIMD = 'CPU: matmul (WebAssembly SIMD, f64 sums)';
const CPU_LOOPS = 'CPU: matmulLoops (JavaScript, f64 sums)';
/** Timed calls per CPU implementation (the median is reported). */
const CPU_REPS = 3;

/** [label, shape, max reps]. */
function shapes(quick: boolean): [string, MatmulShape, number][] {
  if (quick) return [['forward', { m: 256, k: 64, n: 64, transB: true }, 3]];
  return [
    ['forward y = x·Wᵀ', { m: 4096, k: 256, n: 256, transB: true }, 3],
    ['dx = dy·W', { m: 4096, k: 256, n: 256 }, 3],
    ['dW = dyᵀ·x', { m: 256, k: 4096, n: 256, transA: true }, 3],
  ];
}

export const matmulSuite: BenchSuite = {
  name: 'matmul',
  async run(ctx: BenchContext) {
    const measurements: Measurement[] = [];
    for (const [label, shape, max] of shapes(ctx.options.quick)) {
      ctx.log(`matmul ${label}`);
      measurements.push(...(await benchShape(ctx, shape, { max, budgetMs: 15000 })));
    }
    return {
      suite: 'matmul',
      title: 'matmul: out (m, n) = op(A)·op(B), f32',
      baseline: KERNEL,
      notes: [
        `${KERNEL}: validated against the CPU reference first (tolerance 2^-22·(√k + 1)·k for data in [−1, 1)); timed wall clock from submit until a 16-byte readback of the output arrives; GPU ms from timestamp queries.`,
        `${CPU_SIMD} and ${CPU_LOOPS}: median of ${CPU_REPS} calls each (src/ops/nn/matmul.ts); the SIMD row fails unless its output equals the loops' bit for bit, and is missing where WebAssembly SIMD is.`,
        'GB/s counts one read of A and B and one write of the output, 4·(mk + kn + mn) bytes; the work is 2·m·k·n FLOP (537 MFLOP per product at 4096 × 256 × 256), so these kernels are compute-bound and GB/s understates them.',
        'transA / transB give shape keys tA / tB = 1.',
      ],
      measurements,
    };
  },
};

async function benchShape(
  ctx: BenchContext,
  shape: MatmulShape,
  reps: RepPolicy,
): Promise<Measurement[]> {
  const { gpu, log } = ctx;
  const { m, k, n } = shape;
  const key = { m, k, n, tA: shape.transA ? 1 : 0, tB: shape.transB ? 1 : 0 };
  const bytes = 4 * (m * k + k * n + m * n);
  const a = uniformF32(m * k, 1, m + k);
  const b = uniformF32(k * n, 1, k + n);
  const loops = timeCpu(CPU_LOOPS, key, bytes, () => matmulLoops(a, b, shape));
  const expected = loops.value;
  const cpu = [loops.measurement];
  if (simdKernel()) {
    const simd = timeCpu(CPU_SIMD, key, bytes, () => matmul(a, b, shape));
    const same = simd.value.every((v, i) => Object.is(v, expected[i]));
    cpu.push(
      same
        ? simd.measurement
        : { ...simd.measurement, status: 'failed', reason: 'differs from the JavaScript loops' },
    );
  }
  await settleQuietly(ctx);
  const inputs = { a: gpu.upload(a, 'bench a'), b: gpu.upload(b, 'bench b') };
  try {
    const kernel = await measure({
      impl: KERNEL,
      shape: key,
      bytes,
      reps,
      tolerance: 2 ** -22 * (Math.sqrt(k) + 1) * k,
      log,
      error: (out: Float32Array) => maxAbsDiff(out, expected),
      prepare: () => kernelRunner(gpu, inputs, shape),
    });
    return [kernel, ...cpu];
  } finally {
    gpu.pool.release(inputs.a);
    gpu.pool.release(inputs.b);
    gpu.pool.trim();
  }
}

/** CPU_REPS calls of `run`: the last output and a measurement with their median. */
function timeCpu(
  impl: string,
  shape: Measurement['shape'],
  bytes: number,
  run: () => Float32Array,
): { value: Float32Array; measurement: Measurement } {
  const samples: number[] = [];
  let value: Float32Array = new Float32Array(0);
  for (let rep = 0; rep < CPU_REPS; rep++) {
    const timed = timeOnce(run);
    value = timed.value;
    samples.push(timed.ms);
  }
  return { value, measurement: { impl, shape, bytes, status: 'ok', ms: median(samples), samples } };
}

async function kernelRunner(
  gpu: GpuContext,
  inputs: { a: GPUBuffer; b: GPUBuffer },
  shape: MatmulShape,
): Promise<Runner<Float32Array>> {
  const size = shape.m * shape.n;
  const out = gpu.storage(size * 4, 'bench matmul out');
  let validated = false;
  const encode = (batch: ReturnType<GpuContext['beginBatch']>) =>
    encodeMatmul(gpu, batch, { ...inputs, out }, shape);
  return {
    run: async () => {
      const batch = gpu.beginBatch('bench matmul');
      await encode(batch);
      batch.submit();
      // Validation reads the whole output once; timed launches read 16 bytes.
      if (!validated) {
        validated = true;
        return gpu.readF32(out, size);
      }
      return gpu.readF32(out, 4);
    },
    gpuTime: () => gpuTimeOf(gpu, 'bench matmul', encode),
    dispose: () => gpu.pool.release(out),
  };
}
