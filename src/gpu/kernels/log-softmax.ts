/**
 * GPU wrapper for kernels/log_softmax.wgsl; CPU twin: src/ops/log-softmax.ts.
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row, rows spread over (x, y).
 */
import source from '../../../kernels/log_softmax.wgsl?raw';
import { checkLogSoftmaxInput } from '../../ops/log-softmax';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { AdapterSummary } from '../adapter-summary';
import type { GpuContext } from '../context';
import { GpuLimitError } from '../errors';
import { defineKernel } from '../kernel';

export const logSoftmaxKernel = defineKernel({
  name: 'log_softmax',
  source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'logits', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

export const LOG_SOFTMAX_WORKGROUP_SIZES = [32, 64, 128, 256] as const;
export type LogSoftmaxWorkgroupSize = (typeof LOG_SOFTMAX_WORKGROUP_SIZES)[number];

export interface LogSoftmaxOptions {
  /** Threads per row, a power of two. Default: chosen by defaultLogSoftmaxWorkgroupSize(). */
  workgroupSize?: LogSoftmaxWorkgroupSize;
}

/**
 * Threads per row. On a hardware GPU, enough threads to cover the row in a few strides. On a
 * fallback (software) adapter every invocation is CPU work and each barrier a context switch, so
 * the fewest threads win: measured on SwiftShader with 2 cores, 32 threads beat 256 by 15× at
 * V = 64 and by 1.5–3× at V = 4096–32768.
 */
export function defaultLogSoftmaxWorkgroupSize(
  summary: AdapterSummary,
  cols: number,
): LogSoftmaxWorkgroupSize {
  if (summary.isFallbackAdapter || summary.architecture === 'swiftshader') return 32;
  if (cols <= 256) return 64;
  if (cols <= 2048) return 128;
  return 256;
}

/** Records a log-softmax of resident buffers into `batch`. logits, out: (rows, cols) f32. */
export async function encodeLogSoftmax(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { logits: GPUBuffer; out: GPUBuffer },
  rows: number,
  cols: number,
  options: LogSoftmaxOptions = {},
): Promise<void> {
  const workgroupSize = options.workgroupSize ?? defaultLogSoftmaxWorkgroupSize(gpu.summary, cols);
  if (!LOG_SOFTMAX_WORKGROUP_SIZES.includes(workgroupSize)) {
    throw new RangeError(
      `logSoftmax: workgroupSize must be one of ${LOG_SOFTMAX_WORKGROUP_SIZES.join(', ')}, got ${workgroupSize}`,
    );
  }
  checkInt('logSoftmax', 'rows', rows, 1, 2 ** 31 - 1);
  checkInt('logSoftmax', 'cols', cols, 1, 2 ** 31 - 1);
  const bytes = rows * cols * 4;
  const maxBinding = gpu.summary.limits.maxStorageBufferBindingSize;
  if (bytes > maxBinding) {
    throw new GpuLimitError(
      'maxStorageBufferBindingSize (bytes)',
      bytes,
      maxBinding,
      'logSoftmax logits',
    );
  }
  const pipeline = await gpu.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: workgroupSize });
  batch.dispatch(logSoftmaxKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
}

/** Convenience path: upload, run, read back (one sync point). Same checks as the CPU reference. */
export async function logSoftmaxGpu(
  gpu: GpuContext,
  logits: Float32Array,
  rows: number,
  cols: number,
  options: LogSoftmaxOptions = {},
): Promise<Float32Array> {
  checkLogSoftmaxInput(logits, rows, cols);
  const input = gpu.upload(logits, 'logits');
  const out = gpu.storage(logits.byteLength, 'log-probs');
  try {
    const batch = gpu.beginBatch('logSoftmax');
    await encodeLogSoftmax(gpu, batch, { logits: input, out }, rows, cols, options);
    batch.submit();
    return await gpu.readF32(out, rows * cols);
  } finally {
    gpu.pool.release(input);
    gpu.pool.release(out);
  }
}
