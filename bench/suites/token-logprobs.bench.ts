/**
 * Token log-probs + entropy (src/gpu/kernels/token-logprobs.ts, one fused kernel) against the
 * same computation in tfjs-backend-webgpu and onnxruntime-web (WebGPU EP, and its wasm CPU EP),
 * with the plain copy kernel as this device's bandwidth ceiling.
 */
import { encodeTokenLogprobs } from '../../src/gpu/kernels/token-logprobs';
import type { GpuContext } from '../../src/gpu/context';
import { tokenLogprobs, type TokenLogprobs } from '../../src/ops/token-logprobs';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { seededRandom, uniformF32 } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, settleQuietly, timeOnce, type RepPolicy, type Runner } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';
import { tokenLogprobsModel } from '../onnx/token-logprobs-graph';
import { checkPlacement } from '../peers/ort';
import { submitAndReadF32 } from '../core/read-with-batch';
import { tfjsTokenLogprobs } from '../peers/tfjs';
import { COPY_IMPL, COPY_TIMING, measureCopy } from './copy-ceiling';

export const IMPL = {
  ours: 'ours (token_logprobs.wgsl)',
  tfjs: 'tfjs-backend-webgpu',
  ortWebgpu: 'onnxruntime-web webgpu',
  ortWasm: 'onnxruntime-web wasm (CPU)',
  cpu: 'CPU reference (JS, f64)',
} as const;

interface Shape {
  N: number;
  V: number;
  reps: RepPolicy;
}

/**
 * On a software adapter N = 512 is the main V = 32768 shape and 4096 × 32768 one repetition
 * (a peer launch there takes 15–27 s on SwiftShader); hardware gets the real 4096-row shapes.
 */
function shapes(software: boolean, quick: boolean): Shape[] {
  const few = (max: number): RepPolicy => ({ max, budgetMs: 6000 });
  if (quick) {
    return [
      { N: 512, V: 64, reps: few(3) },
      { N: 128, V: 32768, reps: few(2) },
    ];
  }
  if (software) {
    return [
      { N: 4096, V: 64, reps: few(7) },
      { N: 4096, V: 4096, reps: few(5) },
      { N: 512, V: 32768, reps: few(5) },
      { N: 4096, V: 32768, reps: { max: 1, budgetMs: 0 } },
    ];
  }
  return [
    { N: 4096, V: 64, reps: few(20) },
    { N: 4096, V: 4096, reps: few(20) },
    { N: 4096, V: 32768, reps: few(10) },
  ];
}

/** Largest error over both outputs; f32 kernels vs the float64 reference. */
function errorOf(reference: TokenLogprobs) {
  return (result: TokenLogprobs): number =>
    Math.max(
      maxAbsDiff(result.logp, reference.logp),
      maxAbsDiff(result.entropy ?? new Float32Array(0), reference.entropy ?? new Float32Array(0)),
    );
}

/**
 * |logp| reaches ~30 here (logits uniform in ±10, V ≤ 32768); f32 sums of 32768 terms keep
 * about 5 significant digits, so 1e-3 absolute separates rounding from a wrong result.
 */
const TOLERANCE = 1e-3;

export const tokenLogprobsSuite: BenchSuite = {
  name: 'token-logprobs',
  usesPeers: true,
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const measurements: Measurement[] = [];
    for (const shape of shapes(ctx.env.software, ctx.options.quick)) {
      measurements.push(...(await benchShape(ctx, shape)));
    }
    return {
      suite: 'token-logprobs',
      title: 'token log-probs + entropy: logits (N, V) f32, targets (N) → logp (N), entropy (N)',
      baseline: IMPL.ours,
      ceiling: COPY_IMPL,
      notes: [
        'Every implementation is validated against the CPU reference (float64) before it is timed; one that fails is reported, not timed.',
        'Timed: wall clock from launch until logp and entropy (2·N floats) are on the CPU, inputs already resident on the GPU (uploaded before timing); median of the reps. The first launch (pipeline compiles, uploads) is the untimed validation run.',
        `${IMPL.ours}: encodeTokenLogprobs on resident buffers (no input-status buffer: trusted inputs, as in a training step), then readback of logp and entropy in the same submission (one staging buffer, one map). GPU ms: timestamp queries around the same dispatch, in up to 3 extra launches after the timed ones (on SwiftShader these can read above the wall clock: treat them as a rough check).`,
        `${IMPL.tfjs}: tf.logSoftmax → tf.gather(logp, targets (N, 1), axis 1, batchDims 1), entropy = −Σ exp(logp)·logp; logits tensor resident; result via tensor.data().`,
        `${IMPL.ortWebgpu}: an ONNX graph built in code (ReduceMax, Sub, Exp, ReduceSum, Log, Sub, GatherElements; entropy via Exp, Mul, ReduceSum, Neg; not LogSoftmax, which falls back to the CPU EP on SwiftShader), node placement checked with logSeverityLevel 0 for every shape; logits and targets fed as GPU buffers (Tensor.fromGpuBuffer on ort.env.webgpu.device), outputs downloaded by ORT.`,
        `${IMPL.ortWasm}: the same graph on ORT's wasm CPU EP, CPU tensors in and out.`,
        `${IMPL.cpu}: one call (no warm-up) of tokenLogprobs (src/ops/token-logprobs.ts), which is also the validation reference.`,
        COPY_TIMING,
        'GB/s for the log-prob implementations counts the logits read once (N·V·4 bytes); "of copy" = that GB/s ÷ the copy kernel GB/s on this device.',
      ],
      measurements,
    };
  },
};

async function benchShape(ctx: BenchContext, { N, V, reps }: Shape): Promise<Measurement[]> {
  const { gpu, log } = ctx;
  const shape = { N, V };
  const bytes = N * V * 4;
  log(`token-logprobs ${N}×${V}: preparing data and the CPU reference`);
  const logits = uniformF32(N * V, 10, N * 7919 + V);
  const next = seededRandom(N + V);
  const targets = Int32Array.from({ length: N }, () => Math.floor(next() * V));
  const { value: reference, ms: cpuMs } = timeOnce(() => tokenLogprobs(logits, targets, N, V));
  await settleQuietly(ctx);
  const error = errorOf(reference);
  const common = { shape, bytes, reps, error, tolerance: TOLERANCE, log };
  const out: Measurement[] = [];

  // Ours and the copy ceiling share one resident copy of the logits.
  const input = gpu.upload(logits, 'bench logits');
  try {
    out.push(
      await measure({
        ...common,
        impl: IMPL.ours,
        prepare: () => oursRunner(gpu, input, targets, N, V),
      }),
    );
    out.push(await measureCopy(gpu, input, logits, shape, reps, log));
  } finally {
    gpu.pool.release(input);
    gpu.pool.trim();
  }
  out.push(
    await measure({
      ...common,
      impl: IMPL.tfjs,
      prepare: () => tfjsRunner(ctx, logits, targets, N, V),
    }),
  );
  out.push(
    await measure({
      ...common,
      impl: IMPL.ortWebgpu,
      prepare: () => ortWebgpuRunner(ctx, logits, targets, N, V),
    }),
  );
  out.push(
    await measure({
      ...common,
      impl: IMPL.ortWasm,
      prepare: () => ortWasmRunner(ctx, logits, targets, N, V),
    }),
  );
  out.push({
    impl: IMPL.cpu,
    shape,
    bytes,
    status: 'ok',
    ms: cpuMs,
    samples: [cpuMs],
    maxAbsErr: 0,
  });
  return out;
}

async function oursRunner(
  gpu: GpuContext,
  logits: GPUBuffer,
  targetIds: Int32Array,
  N: number,
  V: number,
): Promise<Runner<TokenLogprobs>> {
  const targets = gpu.upload(targetIds, 'bench targets');
  const logp = gpu.storage(N * 4, 'bench logp');
  const entropy = gpu.storage(N * 4, 'bench entropy');
  const encode = (batch: ReturnType<GpuContext['beginBatch']>) =>
    encodeTokenLogprobs(gpu, batch, { logits, targets, logp, entropy }, N, V);
  return {
    run: async () => {
      const batch = gpu.beginBatch('bench token_logprobs');
      await encode(batch);
      const [lp, ent] = await submitAndReadF32(gpu, batch, [
        [logp, N],
        [entropy, N],
      ]);
      return { logp: lp as Float32Array, entropy: ent as Float32Array };
    },
    gpuTime: () => gpuTimeOf(gpu, 'bench token_logprobs', encode),
    dispose: () => {
      for (const buffer of [targets, logp, entropy]) gpu.pool.release(buffer);
    },
  };
}

async function tfjsRunner(
  ctx: BenchContext,
  logitsData: Float32Array,
  targets: Int32Array,
  N: number,
  V: number,
): Promise<Runner<TokenLogprobs>> {
  const { tf } = await ctx.tfjs();
  const logits = tf.tensor2d(logitsData, [N, V]);
  const ids = tf.tensor2d(targets, [N, 1], 'int32');
  return {
    run: async () => {
      const [logp, entropy] = tfjsTokenLogprobs(tf, logits, ids);
      try {
        const [lp, ent] = await Promise.all([logp.data(), entropy.data()]);
        return { logp: lp as Float32Array, entropy: ent as Float32Array };
      } finally {
        logp.dispose();
        entropy.dispose();
      }
    },
    dispose: () => {
      logits.dispose();
      ids.dispose();
    },
  };
}

async function ortWebgpuRunner(
  ctx: BenchContext,
  logitsData: Float32Array,
  targets: Int32Array,
  N: number,
  V: number,
): Promise<Runner<TokenLogprobs>> {
  const ort = await ctx.ort();
  const model = tokenLogprobsModel(N, V);
  const misplaced = await checkPlacement(ort, ctx.ortLogTap, model, 'webgpu');
  if (misplaced) throw new Error(misplaced);
  const session = await ort.InferenceSession.create(model, { executionProviders: ['webgpu'] });
  const device = await ort.env.webgpu.device;
  const upload = (data: Float32Array | Int32Array, label: string) => {
    const buffer = device.createBuffer({
      label,
      size: Math.ceil(data.byteLength / 16) * 16,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return buffer;
  };
  const logitsBuffer = upload(logitsData, 'ort bench logits');
  const targetsBuffer = upload(targets, 'ort bench targets');
  const feeds = {
    logits: ort.Tensor.fromGpuBuffer(logitsBuffer, { dataType: 'float32', dims: [N, V] }),
    targets: ort.Tensor.fromGpuBuffer(targetsBuffer, { dataType: 'int32', dims: [N, 1] }),
  };
  return {
    run: async () => {
      const out = await session.run(feeds);
      const logp = out.logp_token!;
      const entropy = out.entropy!;
      const result = { logp: logp.data as Float32Array, entropy: entropy.data as Float32Array };
      logp.dispose();
      entropy.dispose();
      return result;
    },
    dispose: async () => {
      await session.release();
      logitsBuffer.destroy();
      targetsBuffer.destroy();
    },
  };
}

async function ortWasmRunner(
  ctx: BenchContext,
  logitsData: Float32Array,
  targets: Int32Array,
  N: number,
  V: number,
): Promise<Runner<TokenLogprobs>> {
  const ort = await ctx.ort();
  const model = tokenLogprobsModel(N, V);
  const misplaced = await checkPlacement(ort, ctx.ortLogTap, model, 'wasm');
  if (misplaced) throw new Error(misplaced);
  const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
  const feeds = {
    logits: new ort.Tensor('float32', logitsData, [N, V]),
    targets: new ort.Tensor('int32', targets, [N, 1]),
  };
  return {
    run: async () => {
      const out = await session.run(feeds);
      return {
        logp: out.logp_token!.data as Float32Array,
        entropy: out.entropy!.data as Float32Array,
      };
    },
    dispose: () => session.release(),
  };
}
