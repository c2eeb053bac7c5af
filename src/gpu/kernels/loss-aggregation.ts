/**
 * GPU wrappers for the loss-aggregation kernels; CPU twin: src/ops/loss-aggregation.ts.
 *
 *   kernels/loss_aggregation_rows.wgsl    one workgroup per row: (Σ m·ℓ, Σ m) per row, weights := m
 *   kernels/loss_aggregation_reduce.wgsl  one workgroup: loss, per-row scales, masked means
 *   kernels/loss_aggregation_scale.wgsl   one thread per element: values[r, t] *= rowScale[r]
 *
 * The reduce and scale passes are shared with the policy loss (and any other per-token loss):
 * such a loss writes its own (rows, columns) partials with Σ m·ℓ and Σ m in columns 0 and 1, and
 * gets its loss, statistics and ∂loss/∂logp from encodeLossReduce() and encodeScaleRows().
 */
import rowsSource from '../../../kernels/loss_aggregation_rows.wgsl?raw';
import reduceSource from '../../../kernels/loss_aggregation_reduce.wgsl?raw';
import scaleSource from '../../../kernels/loss_aggregation_scale.wgsl?raw';
import {
  type AggregatedLoss,
  type LossAggOptions,
  checkAggregateLossInput,
  checkLossAggOptions,
  resolveEmptyRows,
} from '../../ops/loss-aggregation';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import { checkBindingSize as checkElementsBinding } from './advantage-dispatch';
import {
  type RowWorkgroupSize,
  defaultRowWorkgroupSize,
  resolveRowWorkgroupSize,
} from './row-workgroup-size';
import { PooledBuffers, maskTokens, readChecked } from './run-convenience';

const OP = 'aggregateLoss';

export const lossAggregationRowsKernel = defineKernel({
  name: 'loss_aggregation_rows',
  source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + rowsSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'tokenLoss', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'partials', access: 'read_write' },
    { name: 'weights', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

export const lossAggregationReduceKernel = defineKernel({
  name: 'loss_aggregation_reduce',
  source: WORKGROUP_REDUCE_WGSL + reduceSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'columns', type: 'u32' },
    { name: 'mode', type: 'u32' },
    { name: 'divisor', type: 'f32' },
  ],
  storage: [
    { name: 'partials', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'rowScale', access: 'read_write' },
  ],
});

export const lossAggregationScaleKernel = defineKernel({
  name: 'loss_aggregation_scale',
  source: scaleSource,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'values', access: 'read_write' },
    { name: 'rowScale', access: 'read' },
  ],
});

/** Tensor names of the aggregation's input-status slots (for `new InputStatus(...)`). */
export const AGGREGATE_LOSS_STATUS_TENSORS = ['tokenLoss', 'mask'] as const;

/** The CPU op's options plus the threads per workgroup. */
export interface LossAggGpuOptions extends LossAggOptions {
  /** Threads per row and for the row reduction, one of 32, 64, 128, 256. Default: chosen by
   *  rowWorkgroupSize() and reduceWorkgroupSize(). */
  workgroupSize?: RowWorkgroupSize;
}

/**
 * Threads per row for the one-workgroup-per-row loss kernels: defaultRowWorkgroupSize(), but no
 * more than the row needs (a power of two ≥ cols), so short rows (one action per step, say) leave
 * no thread idle. An explicit `workgroupSize` (32 … 256) wins.
 */
export function rowWorkgroupSize(
  op: string,
  gpu: GpuContext,
  cols: number,
  workgroupSize?: number,
): number {
  if (workgroupSize !== undefined) {
    return resolveRowWorkgroupSize(op, gpu.summary, cols, workgroupSize);
  }
  const wanted = defaultRowWorkgroupSize(gpu.summary, cols);
  let fit = 1;
  while (fit < cols && fit < wanted) fit *= 2;
  return fit;
}

/** Threads of the one-workgroup row reduction: few on a software adapter, 256 on hardware. */
export function reduceWorkgroupSize(op: string, gpu: GpuContext, workgroupSize?: number): number {
  if (workgroupSize !== undefined) {
    return resolveRowWorkgroupSize(op, gpu.summary, 1, workgroupSize);
  }
  const { summary } = gpu;
  return summary.isFallbackAdapter || summary.architecture === 'swiftshader' ? 32 : 256;
}

const SCALE_WORKGROUP_SIZE = 64;

/** Throws a GpuLimitError when one (rows, cols) f32 tensor does not fit one storage binding. */
export function checkBindingSize(gpu: GpuContext, rows: number, cols: number, what: string): void {
  checkElementsBinding(gpu, rows * cols, what);
}

/**
 * Scratch buffers that live inside one encode call (per-row partials and scales), kept per device
 * and role and grown on demand. Reusing them across encodes, even within one batch, is safe: each
 * encode's dispatches fully consume them before the next encode's run (dispatches on one queue
 * execute in order), and nothing writes them from the CPU. They stay out of the buffer pool, so
 * a caller's later upload can never land in a buffer an unsubmitted batch still uses.
 */
const scratch = new WeakMap<GpuContext, Map<string, GPUBuffer>>();

export function scratchBuffer(gpu: GpuContext, role: string, byteLength: number): GPUBuffer {
  let buffers = scratch.get(gpu);
  if (!buffers) {
    buffers = new Map();
    scratch.set(gpu, buffers);
  }
  const existing = buffers.get(role);
  if (existing && existing.size >= byteLength) return existing;
  // The old buffer is not destroyed: a recorded but unsubmitted batch may still bind it.
  const size = Math.max(256, Math.ceil(byteLength / 256) * 256);
  const buffer = gpu.device.createBuffer({
    label: `scratch: ${role}`,
    size,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  buffers.set(role, buffer);
  return buffer;
}

/** A status buffer for encodes whose caller does not check the input status (never read). */
export function unusedStatusBuffer(gpu: GpuContext): GPUBuffer {
  return scratchBuffer(gpu, 'unused input status', 64);
}

/** The reduce kernel's mode code and constant divisor for `options` (see the WGSL header). */
function reduceMode(
  rows: number,
  cols: number,
  options: LossAggOptions,
): { mode: number; divisor: number } {
  // The seq-mean-token-sum modes divide by R: mode 3 counts the non-empty rows in the kernel,
  // mode 2 takes every row (a constant).
  const exclude = resolveEmptyRows(OP, options) === 'exclude';
  switch (options.mode) {
    case 'token-mean':
      return { mode: 0, divisor: 1 };
    case 'seq-mean-token-mean':
      return { mode: 1, divisor: 1 };
    case 'seq-mean-token-sum':
      return exclude ? { mode: 3, divisor: 1 } : { mode: 2, divisor: rows };
    case 'seq-mean-token-sum-norm': {
      const factor = options.lossScaleFactor ?? cols;
      return exclude ? { mode: 3, divisor: factor } : { mode: 2, divisor: rows * factor };
    }
    case 'dr-grpo':
      return { mode: 2, divisor: rows * (options.maxCompletionLength ?? cols) };
  }
}

/**
 * Records the row reduction: partials (rows, columns) with Σ m·ℓ in column 0 and Σ m in column 1
 * → out[0] = loss, out[k − 1] = masked mean of column k (k ≥ 2), rowScale[r] = ∂loss/∂(row sum).
 * out: (columns − 1) f32; rowScale: (rows) f32. `workgroupSize`: see reduceWorkgroupSize().
 */
export async function encodeLossReduce(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { partials: GPUBuffer; out: GPUBuffer; rowScale: GPUBuffer },
  rows: number,
  cols: number,
  columns: number,
  options: LossAggOptions,
  workgroupSize?: RowWorkgroupSize,
): Promise<void> {
  checkLossAggOptions(OP, options);
  checkInt(OP, 'columns', columns, 2, 2 ** 16);
  const pipeline = await gpu.pipelines.get(lossAggregationReduceKernel, {
    WORKGROUP_SIZE: reduceWorkgroupSize(OP, gpu, workgroupSize),
  });
  batch.dispatch(lossAggregationReduceKernel, {
    pipeline,
    buffers,
    uniforms: { rows, columns, ...reduceMode(rows, cols, options) },
    workgroups: [1],
  });
}

/** Records values[r, t] *= rowScale[r] for a (rows, cols) f32 buffer, in place. */
export async function encodeScaleRows(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { values: GPUBuffer; rowScale: GPUBuffer },
  rows: number,
  cols: number,
): Promise<void> {
  const count = rows * cols;
  checkInt(OP, 'rows × cols', count, 1, 2 ** 32 - 1);
  const pipeline = await gpu.pipelines.get(lossAggregationScaleKernel, {
    WORKGROUP_SIZE: SCALE_WORKGROUP_SIZE,
  });
  batch.dispatch(lossAggregationScaleKernel, {
    pipeline,
    buffers,
    uniforms: { count, cols },
    workgroups: workgroupGrid(
      Math.ceil(count / SCALE_WORKGROUP_SIZE),
      gpu.summary.limits.maxComputeWorkgroupsPerDimension,
    ),
  });
}

/**
 * Records the aggregation of resident buffers: tokenLoss, mask: (rows, cols) f32 →
 * loss: 1 f32, weights: (rows, cols) f32 = ∂loss/∂tokenLoss. `status` (from
 * `new InputStatus(gpu, 'aggregateLoss', AGGREGATE_LOSS_STATUS_TENSORS)`) receives non-finite
 * inputs; without it they go unreported. The mask must hold only 0 and 1.
 */
export async function encodeAggregateLoss(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    tokenLoss: GPUBuffer;
    mask: GPUBuffer;
    loss: GPUBuffer;
    weights: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: LossAggGpuOptions,
): Promise<void> {
  checkInt(OP, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(OP, 'cols', cols, 1, 2 ** 31 - 1);
  checkLossAggOptions(OP, options);
  checkBindingSize(gpu, rows, cols, 'aggregateLoss tokenLoss');
  const rowSize = rowWorkgroupSize(OP, gpu, cols, options.workgroupSize);
  const partials = scratchBuffer(gpu, 'loss aggregation partials', rows * 2 * 4);
  const rowScale = scratchBuffer(gpu, 'loss aggregation row scale', rows * 4);
  const pipeline = await gpu.pipelines.get(lossAggregationRowsKernel, { WORKGROUP_SIZE: rowSize });
  batch.dispatch(lossAggregationRowsKernel, {
    pipeline,
    buffers: {
      tokenLoss: buffers.tokenLoss,
      mask: buffers.mask,
      partials,
      weights: buffers.weights,
      status: buffers.status ?? unusedStatusBuffer(gpu),
    },
    uniforms: { rows, cols },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  await encodeLossReduce(
    gpu,
    batch,
    { partials, out: buffers.loss, rowScale },
    rows,
    cols,
    2,
    options,
    options.workgroupSize,
  );
  await encodeScaleRows(gpu, batch, { values: buffers.weights, rowScale }, rows, cols);
}

/**
 * Convenience path: check, upload, run, read back. Shapes, options and the 0/1 mask are checked
 * on the CPU before any work; NaN/Inf token losses are found by the kernel and thrown after it
 * ran, as the same OpInputError the CPU reference throws.
 */
export async function aggregateLossGpu(
  gpu: GpuContext,
  tokenLoss: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: LossAggGpuOptions,
): Promise<AggregatedLoss> {
  checkAggregateLossInput(tokenLoss, mask, rows, cols, options, { finite: false });
  checkBindingSize(gpu, rows, cols, 'aggregateLoss tokenLoss');
  const tokens = maskTokens(mask);
  const status = new InputStatus(gpu, OP, AGGREGATE_LOSS_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      tokenLoss: pooled.upload(tokenLoss, 'tokenLoss'),
      mask: pooled.upload(mask, 'mask'),
      loss: pooled.storage(1, 'loss'),
      weights: pooled.storage(rows * cols, 'loss weights'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP);
    await encodeAggregateLoss(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [loss, weights] = await readChecked(gpu, status, [
      [buffers.loss, 1],
      [buffers.weights, rows * cols],
    ]);
    return { loss: loss[0]!, weights, tokens, emptyMask: tokens === 0 };
  } finally {
    pooled.release();
    status.release();
  }
}
