/**
 * Shared by the advantage and loss suites: one op's GPU encode path (resident buffers, one
 * command batch) against its CPU reference on the same inputs, both through measure(). The GPU
 * output is validated in full against the CPU result first; timed GPU launches read back 16 bytes.
 */
import type { CommandBatch } from '../../src/gpu/batch';
import type { GpuContext } from '../../src/gpu/context';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { seededRandom } from '../../src/util/random';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, settleQuietly, type RepPolicy, type Runner } from '../core/measure';
import type { BenchContext, Measurement, SuiteResult } from '../core/types';

/** An op's resident GPU state on one shape: inputs uploaded, outputs allocated. */
export interface GpuCase {
  /** Records one launch of the op. */
  encode(batch: CommandBatch): Promise<void>;
  /** Every output, in the order of the CPU outputs (validation only). */
  readAll(): Promise<Float32Array[]>;
  /** One output buffer: timed launches read 16 bytes of it. */
  probe: GPUBuffer;
  dispose(): void;
}

/** One shape of one op: the CPU call and the GPU setup over the same seeded inputs. */
export interface OpCase {
  shape: Record<string, number>;
  /** Bytes the op reads and writes once (inputs + outputs, f32). */
  bytes: number;
  /** One call of the CPU reference; outputs in the order of GpuCase.readAll(). */
  cpu(): Float32Array[];
  gpu(gpu: GpuContext): GpuCase;
}

export interface OpSuiteSpec {
  name: string;
  title: string;
  /** Implementation names: the GPU one is the baseline of the ratio column. */
  gpuImpl: string;
  cpuImpl: string;
  notes: string[];
  /** Cases per run; `quick` gives the smoke-run shapes. */
  cases(quick: boolean): OpCase[];
  tolerance: number;
  reps: RepPolicy;
}

export const TIMING_NOTES = [
  'GPU rows: inputs resident; each launch records the op into one command batch, submits it and waits for a 16-byte readback of one output (validated once in full against the CPU result first); GPU ms from timestamp queries.',
  'CPU rows: one call of the reference (JS, f64 accumulation) per repetition; max |err| is against its own first call.',
  'ms ÷ GPU on a CPU row > 1: the GPU path is faster. GB/s: the bytes stated above over the median ms.',
];

/** Runs every case: GPU row then CPU row per shape. */
export async function runOpSuite(ctx: BenchContext, spec: OpSuiteSpec): Promise<SuiteResult> {
  const measurements: Measurement[] = [];
  for (const c of spec.cases(ctx.options.quick)) {
    measurements.push(...(await benchCase(ctx, spec, c)));
  }
  return {
    suite: spec.name,
    title: spec.title,
    baseline: spec.gpuImpl,
    notes: [...spec.notes, ...TIMING_NOTES],
    measurements,
  };
}

async function benchCase(ctx: BenchContext, spec: OpSuiteSpec, c: OpCase): Promise<Measurement[]> {
  const { gpu, log } = ctx;
  const expected = c.cpu();
  const error = (outs: Float32Array[]) => maxError(outs, expected);
  await settleQuietly(ctx);
  const gpuRow = await measure({
    impl: spec.gpuImpl,
    shape: c.shape,
    bytes: c.bytes,
    reps: spec.reps,
    tolerance: spec.tolerance,
    log,
    error,
    prepare: async () => gpuRunner(gpu, spec.name, c.gpu(gpu)),
  });
  const cpuRow = await measure({
    impl: spec.cpuImpl,
    shape: c.shape,
    bytes: c.bytes,
    reps: spec.reps,
    tolerance: 0,
    log,
    error,
    prepare: async () => ({ run: async () => c.cpu(), dispose: () => undefined }),
  });
  gpu.pool.trim();
  return [gpuRow, cpuRow];
}

function gpuRunner(gpu: GpuContext, name: string, state: GpuCase): Runner<Float32Array[]> {
  const label = `bench ${name}`;
  let validated = false;
  return {
    run: async () => {
      const batch = gpu.beginBatch(label);
      await state.encode(batch);
      batch.submit();
      if (!validated) {
        validated = true;
        return state.readAll();
      }
      return [await gpu.readF32(state.probe, 4)];
    },
    gpuTime: () => gpuTimeOf(gpu, label, (batch) => state.encode(batch)),
    dispose: () => state.dispose(),
  };
}

/** Largest |a − b| over every output; Infinity when the output counts or lengths differ. */
function maxError(actual: Float32Array[], expected: Float32Array[]): number {
  if (actual.length !== expected.length) return Infinity;
  let worst = 0;
  expected.forEach((e, k) => {
    const a = actual[k]!;
    worst = a.length === e.length ? Math.max(worst, maxAbsDiff(a, e)) : Infinity;
  });
  return worst;
}

/**
 * (B, T) response mask as RL batches have it: row b is 1 for its first L_b tokens, L_b uniform in
 * [T/4, T] (at least 1), then 0 (right padding).
 */
export function responseMask(rows: number, cols: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const mask = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    const min = Math.max(1, Math.floor(cols / 4));
    const length = min + Math.floor(next() * (cols - min + 1));
    mask.fill(1, b * cols, b * cols + Math.min(length, cols));
  }
  return mask;
}

/** The RL shapes of these suites: a small batch, and B = 512 responses × T = 1024 tokens. */
export function rlShapes(quick: boolean): { B: number; T: number }[] {
  if (quick) return [{ B: 64, T: 256 }];
  return [
    { B: 64, T: 256 },
    { B: 512, T: 1024 },
  ];
}
