/**
 * GPU wrapper for kernels/log_softmax.wgsl; CPU twin: src/ops/log-softmax.ts.
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row, rows spread over (x, y).
 */
import source from '../../../kernels/log_softmax.wgsl?raw';
import { checkLogSoftmaxInput } from '../../ops/log-softmax';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { GpuLimitError } from '../errors';
import { defineKernel } from '../kernel';
import {
  ROW_WORKGROUP_SIZES,
  defaultRowWorkgroupSize,
  resolveRowWorkgroupSize,
  type RowWorkgroupSize,
} from './row-workgroup-size';

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

export {
  ROW_WORKGROUP_SIZES as LOG_SOFTMAX_WORKGROUP_SIZES,
  defaultRowWorkgroupSize as defaultLogSoftmaxWorkgroupSize,
  type RowWorkgroupSize as LogSoftmaxWorkgroupSize,
};

export interface LogSoftmaxOptions {
  /** Threads per row, a power of two. Default: chosen by defaultRowWorkgroupSize(). */
  workgroupSize?: RowWorkgroupSize;
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
  const workgroupSize = resolveRowWorkgroupSize(
    'logSoftmax',
    gpu.summary,
    cols,
    options.workgroupSize,
  );
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
