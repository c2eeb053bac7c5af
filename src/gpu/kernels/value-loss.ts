/**
 * GPU wrapper for kernels/value_loss.wgsl; CPU twin: valueLoss() in src/ops/value-loss.ts.
 *
 *   value_loss.wgsl               one workgroup per row: ℓ, ½·∂ℓ/∂v, row partials (Σ m·½ℓ, Σ m, Σ clipped)
 *   loss_aggregation_reduce.wgsl  one workgroup: stats = (½·aggregate(ℓ), clipfrac), row scales
 *   loss_aggregation_scale.wgsl   one thread per token: grad *= row scale → ∂loss/∂vpreds
 *
 * The last two are the loss aggregation's own passes (src/gpu/kernels/loss-aggregation.ts), so the
 * aggregation modes are exactly the ones the policy loss uses. Loss and clip fraction land in one
 * 2-float stats buffer, read back once.
 *
 * Resident inputs are checked on the GPU: non-finite vpreds / oldValues / returns are counted in
 * the input status from valueLossStatus(); pass its `.buffer` as `status` and `await
 * status.check()` after submitting. Without `status` the inputs are trusted.
 */
import source from '../../../kernels/value_loss.wgsl?raw';
import {
  checkValueLossInput,
  resolveValueLossOptions,
  type ValueLoss,
  type ValueLossOptions,
} from '../../ops/value-loss';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { reducedStats } from './reduced-stats';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import {
  checkBindingSize,
  encodeLossReduce,
  encodeScaleRows,
  scratchBuffer,
  unusedStatusBuffer,
} from './loss-aggregation';
import { resolveRowWorkgroupSize, type RowWorkgroupSize } from './row-workgroup-size';
import { PooledBuffers, maskTokens, readChecked } from './run-convenience';

const OP = 'valueLoss';

export const valueLossKernel = defineKernel({
  name: 'value_loss',
  source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'clip', type: 'u32' },
    { name: 'cliprange', type: 'f32' },
  ],
  storage: [
    { name: 'vpreds', access: 'read' },
    { name: 'oldValues', access: 'read' },
    { name: 'returns', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'tokenLoss', access: 'read_write' },
    { name: 'grad', access: 'read_write' },
    { name: 'partials', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

/** Tensor names of the value loss kernel's input-status slots. */
export const VALUE_LOSS_STATUS_TENSORS = ['vpreds', 'oldValues', 'returns'] as const;

export function valueLossStatus(gpu: GpuContext): InputStatus {
  return new InputStatus(gpu, OP, VALUE_LOSS_STATUS_TENSORS);
}

/** The CPU op's options plus the threads per row. */
export interface ValueLossGpuOptions extends ValueLossOptions {
  /** Threads per row, a power of two. Default: chosen by defaultRowWorkgroupSize(). */
  workgroupSize?: RowWorkgroupSize;
}

/** The reduced statistics, the loss and the clip fraction, at the kernel's COL_ columns. */
const VALUE_LOSS_STATS = reducedStats('value_loss.wgsl', source, ['clipfrac']);
/** Columns of the per-row partials: Σ m·½ℓ, Σ m, Σ m·[clipped] (see the WGSL header). */
const PARTIAL_COLUMNS = VALUE_LOSS_STATS.columns;

/**
 * Records the value loss of resident buffers. vpreds, oldValues, returns, mask, tokenLoss, grad:
 * (rows, cols) f32; tokenLoss = ℓ (0 at masked positions), grad = ∂loss/∂vpreds; stats: 2 f32 =
 * (loss, clipfrac). The options are resolved (flavor defaults) and checked as on the CPU.
 */
export async function encodeValueLoss(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    vpreds: GPUBuffer;
    oldValues: GPUBuffer;
    returns: GPUBuffer;
    mask: GPUBuffer;
    tokenLoss: GPUBuffer;
    grad: GPUBuffer;
    stats: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: ValueLossGpuOptions = {},
): Promise<void> {
  checkInt(OP, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(OP, 'cols', cols, 1, 2 ** 31 - 1);
  checkInt(OP, 'rows × cols', rows * cols, 1, 2 ** 32 - 1);
  checkBindingSize(gpu, rows, cols, `${OP} vpreds`);
  const { cliprangeValue, aggregation } = resolveValueLossOptions(options);
  const workgroupSize = resolveRowWorkgroupSize(OP, gpu.summary, cols, options.workgroupSize);
  const partials = scratchBuffer(gpu, 'value loss partials', rows * PARTIAL_COLUMNS * 4);
  const rowScale = scratchBuffer(gpu, 'value loss row scale', rows * 4);
  const pipeline = await gpu.pipelines.get(valueLossKernel, { WORKGROUP_SIZE: workgroupSize });
  batch.dispatch(valueLossKernel, {
    pipeline,
    buffers: {
      vpreds: buffers.vpreds,
      oldValues: buffers.oldValues,
      returns: buffers.returns,
      mask: buffers.mask,
      tokenLoss: buffers.tokenLoss,
      grad: buffers.grad,
      partials,
      status: buffers.status ?? unusedStatusBuffer(gpu),
    },
    uniforms: {
      rows,
      cols,
      clip: cliprangeValue === null ? 0 : 1,
      cliprange: cliprangeValue ?? 0,
    },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  await encodeLossReduce(
    gpu,
    batch,
    { partials, out: buffers.stats, rowScale },
    rows,
    cols,
    PARTIAL_COLUMNS,
    aggregation,
  );
  await encodeScaleRows(gpu, batch, { values: buffers.grad, rowScale }, rows, cols);
}

/**
 * Convenience path: check shapes, options and mask on the CPU (same checks as valueLoss), upload,
 * run, read back (one sync point). NaN/Inf inputs are found by the kernel and thrown afterwards
 * as the OpInputError the CPU reference throws.
 */
export async function valueLossGpu(
  gpu: GpuContext,
  vpreds: Float32Array,
  oldValues: Float32Array,
  returns: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ValueLossGpuOptions = {},
): Promise<ValueLoss> {
  checkValueLossInput(vpreds, oldValues, returns, mask, rows, cols, options, { finite: false });
  checkBindingSize(gpu, rows, cols, `${OP} vpreds`);
  const tokens = maskTokens(mask);
  const n = rows * cols;
  const status = valueLossStatus(gpu);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      vpreds: pooled.upload(vpreds, 'vpreds'),
      oldValues: pooled.upload(oldValues, 'oldValues'),
      returns: pooled.upload(returns, 'returns'),
      mask: pooled.upload(mask, 'mask'),
      tokenLoss: pooled.storage(n, 'value token loss'),
      grad: pooled.storage(n, 'value grad'),
      stats: pooled.storage(VALUE_LOSS_STATS.length, 'value loss stats'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP);
    await encodeValueLoss(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [tokenLoss, gradVpreds, stats] = await readChecked(gpu, status, [
      [buffers.tokenLoss, n],
      [buffers.grad, n],
      [buffers.stats, VALUE_LOSS_STATS.length],
    ]);
    const { loss, clipfrac } = VALUE_LOSS_STATS.read(stats);
    return {
      loss,
      tokenLoss,
      gradVpreds,
      clipfrac,
      tokens,
      emptyMask: tokens === 0,
    };
  } finally {
    pooled.release();
    status.release();
  }
}
