/**
 * GPU wrapper for kernels/log_softmax.wgsl; CPU twin: src/ops/log-softmax.ts.
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row, rows spread over (x, y).
 */
import source from '../../../kernels/log_softmax.wgsl?raw';
import { checkLogSoftmaxInput } from '../../ops/log-softmax';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { defineKernel } from '../kernel';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import { checkBindingSize } from './advantage-dispatch';
import {
  ROW_WORKGROUP_SIZES,
  defaultRowWorkgroupSize,
  resolveRowWorkgroupSize,
  type RowWorkgroupSize,
} from './row-workgroup-size';
import { PooledBuffers } from './run-convenience';

export const logSoftmaxKernel = defineKernel({
  name: 'log_softmax',
  source: WORKGROUP_REDUCE_WGSL + source,
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
  checkBindingSize(gpu, rows * cols, 'logSoftmax logits');
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
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      out: pooled.storage(rows * cols, 'log-probs'),
    };
    const batch = gpu.beginBatch('logSoftmax');
    await encodeLogSoftmax(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    return await gpu.readF32(buffers.out, rows * cols);
  } finally {
    pooled.release();
  }
}
