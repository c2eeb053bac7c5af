/**
 * Log-softmax: the WGSL kernel against its CPU reference, validated before it is timed.
 * Effective GB/s counts the minimum traffic: the logits read once and the log-probs written once.
 */
import type { GpuContext } from '../src/gpu/context';
import {
  defaultLogSoftmaxWorkgroupSize,
  encodeLogSoftmax,
  logSoftmaxKernel,
} from '../src/gpu/kernels/log-softmax';
import { timeBatch } from '../src/gpu/timing';
import { logSoftmax } from '../src/ops/log-softmax';
import { maxAbsDiff } from '../src/util/compare';
import { uniformF32 } from '../src/util/random';
import { gbPerSecond, median, timeCpu } from './stats';

export interface LogSoftmaxResult {
  rows: number;
  cols: number;
  gpuMs: number;
  timing: 'timestamp-query' | 'wall-clock';
  gpuGBs: number;
  cpuMs: number;
  cpuGBs: number;
  /** CPU time / GPU time. */
  speedup: number;
  maxAbsError: number;
  reps: number;
  workgroupSize: number;
}

export async function benchLogSoftmax(
  gpu: GpuContext,
  rows: number,
  cols: number,
  reps: number,
): Promise<LogSoftmaxResult> {
  const logits = uniformF32(rows * cols, 10, rows + cols);
  const input = gpu.upload(logits, 'bench logits');
  const out = gpu.storage(logits.byteLength, 'bench log-probs');
  try {
    // Validate first: a fast wrong kernel is not a result.
    const warm = gpu.beginBatch('bench warm-up');
    await encodeLogSoftmax(gpu, warm, { logits: input, out }, rows, cols);
    warm.submit();
    let expected: Float32Array = new Float32Array(0);
    const cpuMs = timeCpu(Math.min(reps, 3), () => {
      expected = logSoftmax(logits, rows, cols);
    });
    const maxAbsError = maxAbsDiff(await gpu.readF32(out, rows * cols), expected);

    const workgroupSize = defaultLogSoftmaxWorkgroupSize(gpu.summary, cols);
    const pipeline = await gpu.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: workgroupSize });
    const grid: [number, number] = [Math.min(rows, 65535), Math.ceil(rows / 65535)];
    const timings = [];
    for (let i = 0; i < reps; i++) {
      timings.push(
        await timeBatch(gpu, 'bench log_softmax', (batch) =>
          batch.dispatch(logSoftmaxKernel, {
            pipeline,
            buffers: { logits: input, out },
            uniforms: { rows, cols },
            workgroups: grid,
          }),
        ),
      );
    }
    const gpuMs = median(timings.map((t) => t.ms));
    const bytes = rows * cols * 4 * 2;
    return {
      rows,
      cols,
      gpuMs,
      timing: timings[0]!.method,
      gpuGBs: gbPerSecond(bytes, gpuMs),
      cpuMs,
      cpuGBs: gbPerSecond(bytes, cpuMs),
      speedup: cpuMs / gpuMs,
      maxAbsError,
      reps,
      workgroupSize,
    };
  } finally {
    gpu.pool.release(input);
    gpu.pool.release(out);
  }
}
