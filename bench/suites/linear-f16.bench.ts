/**
 * The linear layer of a brought model on its f16-stored weight (kernels/nn/linear_f16_gemv.wgsl
 * and kernels/nn/linear_f16.wgsl) against the f32 layer the tiny GPT runs (kernels/nn/matmul.wgsl
 * through encodeLinearForward), at SmolLM2-135M's shapes: an MLP up/gate projection 576 → 1536
 * and the tied LM head 576 → 49152, at 1 row (decoding one sequence) and 64 rows (a batch of 64).
 * All three compute y = x·Wᵀ from the same weights (the f32 layer gets the f16 values widened),
 * so they are validated against one CPU reference (src/ops/nn/linear-f16.ts).
 */
import type { GpuContext } from '../../src/gpu/context';
import { encodeLinearForward } from '../../src/gpu/kernels/nn/linear';
import { encodeLinearF16Forward } from '../../src/gpu/kernels/nn/linear-f16';
import type { LinearShape } from '../../src/ops/nn/linear';
import { linearF16Forward } from '../../src/ops/nn/linear-f16';
import { packF16, unpackF16 } from '../../src/ops/nn/unpack-f16';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { uniformF32 } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, settleQuietly, type Runner } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement } from '../core/types';

const F32 = 'matmul.wgsl (f32 W)';
const GEMV = 'linear_f16_gemv.wgsl (f16 W)';
const TILED = 'linear_f16.wgsl tiled (f16 W)';

function shapes(quick: boolean): LinearShape[] {
  if (quick) return [1, 16].map((rows) => ({ rows, inDim: 64, outDim: 128 }));
  return [1536, 49152].flatMap((outDim) => [1, 64].map((rows) => ({ rows, inDim: 576, outDim })));
}

export const linearF16Suite: BenchSuite = {
  name: 'linear-f16',
  async run(ctx: BenchContext) {
    const measurements: Measurement[] = [];
    for (const shape of shapes(ctx.options.quick)) {
      ctx.log(`linear-f16 rows ${shape.rows} ${shape.inDim} → ${shape.outDim}`);
      measurements.push(...(await benchShape(ctx, shape)));
    }
    return {
      suite: 'linear-f16',
      title: 'linear y = x·Wᵀ: f16-stored W (GEMV, tiled) vs f32 W (matmul), SmolLM2-135M shapes',
      baseline: F32,
      notes: [
        'Shapes: rows (R) × inDim (K) → outDim (N); 576 → 1536 is an MLP projection, 576 → 49152 the tied LM head. No bias.',
        `${GEMV} and ${TILED} read W as f16 pairs (unpack2x16float); ${F32} reads the same values widened to f32. All three validated against linearF16Forward (float64 sums), tolerance 2^-22·(√K + 1)·K/2 for x in [−1, 1) and W in [−0.5, 0.5).`,
        'Timed wall clock from submit until a 16-byte readback of y arrives; GPU ms from timestamp queries. GB/s counts one read of W (2 or 4 bytes per weight) and of x and one write of y.',
        'On SwiftShader these rank the kernels on a CPU; the decode target (weights read once per token at the copy bandwidth) is for a hardware GPU.',
      ],
      measurements,
    };
  },
};

async function benchShape(ctx: BenchContext, shape: LinearShape): Promise<Measurement[]> {
  const { gpu, log } = ctx;
  const { rows, inDim, outDim } = shape;
  const key = { R: rows, K: inDim, N: outDim };
  const x = uniformF32(rows * inDim, 1, rows + inDim);
  const packed = packF16(uniformF32(outDim * inDim, 0.5, outDim)).packed;
  const wide = unpackF16(packed, outDim * inDim);
  const expected = linearF16Forward(x, packed, undefined, shape);
  const tolerance = 2 ** -22 * (Math.sqrt(inDim) + 1) * (inDim / 2);
  const activations = 4 * rows * (inDim + outDim);
  await settleQuietly(ctx);
  const inputs = {
    x: gpu.upload(x, 'bench linear x'),
    w16: gpu.upload(packed, 'bench linear w f16'),
    w32: gpu.upload(wide, 'bench linear w f32'),
  };
  const y = gpu.storage(4 * rows * outDim, 'bench linear y');
  const impls: [string, number, (batch: ReturnType<GpuContext['beginBatch']>) => Promise<void>][] =
    [
      [
        F32,
        4 * outDim * inDim,
        (batch) => encodeLinearForward(gpu, batch, { x: inputs.x, w: inputs.w32, y }, shape),
      ],
      [
        GEMV,
        2 * outDim * inDim,
        (batch) =>
          encodeLinearF16Forward(gpu, batch, { x: inputs.x, w: inputs.w16, y }, shape, {
            kernel: 'gemv',
          }),
      ],
      [
        TILED,
        2 * outDim * inDim,
        (batch) =>
          encodeLinearF16Forward(gpu, batch, { x: inputs.x, w: inputs.w16, y }, shape, {
            kernel: 'tiled',
          }),
      ],
    ];
  try {
    const rowsOut: Measurement[] = [];
    for (const [impl, weightBytes, encode] of impls) {
      if (impl === GEMV && ctx.env.software && rows > 8 && outDim > 4096) {
        // One launch at 64 × 576 → 49152 ran past 20 minutes on SwiftShader (a 2-core machine);
        // software adapters never pick GEMV (linearF16KernelFor), so the row says so instead.
        rowsOut.push({
          impl,
          shape: key,
          bytes: weightBytes + activations,
          status: 'skipped',
          reason: 'GEMV past 8 rows at LM-head width is not run on a software adapter',
        });
        continue;
      }
      rowsOut.push(
        await measure({
          impl,
          shape: key,
          bytes: weightBytes + activations,
          reps: { max: 5, budgetMs: 5000 },
          tolerance,
          log,
          error: (out: Float32Array) => maxAbsDiff(out, expected),
          prepare: async () => runner(gpu, y, rows * outDim, encode),
        }),
      );
    }
    return rowsOut;
  } finally {
    for (const buffer of [inputs.x, inputs.w16, inputs.w32, y]) gpu.pool.release(buffer);
    gpu.pool.trim();
  }
}

function runner(
  gpu: GpuContext,
  y: GPUBuffer,
  size: number,
  encode: (batch: ReturnType<GpuContext['beginBatch']>) => Promise<void>,
): Runner<Float32Array> {
  let validated = false;
  return {
    run: async () => {
      const batch = gpu.beginBatch('bench linear-f16');
      await encode(batch);
      batch.submit();
      // Validation reads the whole output once; timed launches read 16 bytes.
      if (!validated) {
        validated = true;
        return gpu.readF32(y, size);
      }
      return gpu.readF32(y, 4);
    },
    gpuTime: () => gpuTimeOf(gpu, 'bench linear-f16', encode),
    dispose: () => undefined,
  };
}
