/**
 * GPU wrapper for the policy losses; CPU twin: src/ops/policy-loss.ts. Three dispatches:
 *   1. kernels/policy_loss.wgsl, one workgroup per row: token losses, token-local gradients
 *      (or the GSPO 'sequence' coupling), per-row sums (B, 9)
 *   2. kernels/loss_aggregation_reduce.wgsl, one workgroup: loss + 7 statistics into `stats`,
 *      per-row aggregation scales
 *   3. kernels/loss_aggregation_scale.wgsl, per element: gradLogp *= row scale
 */
import source from '../../../kernels/policy_loss.wgsl?raw';
import {
  POLICY_LOSS_STATS,
  type PolicyLossOptions,
  type PolicyLossResult,
  type PolicyLossStats,
  type ResolvedPolicyLossOptions,
  checkPolicyLossInput,
  resolvePolicyLossOptions,
} from '../../ops/policy-loss';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { reflectConstant } from '../wgsl-reflect';
import { reducedStats } from './reduced-stats';
import {
  checkBindingSize,
  encodeLossReduce,
  encodeScaleRows,
  rowWorkgroupSize,
  scratchBuffer,
  unusedStatusBuffer,
} from './loss-aggregation';
import type { RowWorkgroupSize } from './row-workgroup-size';
import { PooledBuffers, maskTokens, readChecked } from './run-convenience';

const OP = 'policyLoss';

/** The CPU op's options plus the threads per workgroup. */
export interface PolicyLossGpuOptions extends PolicyLossOptions {
  /** Threads per row and for the row reduction, one of 32, 64, 128, 256. Default: chosen by
   *  rowWorkgroupSize() and reduceWorkgroupSize() in loss-aggregation.ts. */
  workgroupSize?: RowWorkgroupSize;
}

export const policyLossRowsKernel = defineKernel({
  name: 'policy_loss',
  source: INPUT_STATUS_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'loss_type', type: 'u32' },
    { name: 'clip_low', type: 'f32' },
    { name: 'clip_high', type: 'f32' },
    { name: 'dual_clip', type: 'f32' },
    { name: 'log_ratio_clamp', type: 'f32' },
    { name: 'delta', type: 'f32' },
  ],
  storage: [
    { name: 'logp', access: 'read' },
    { name: 'oldLogp', access: 'read' },
    { name: 'advantages', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'tokenLoss', access: 'read_write' },
    { name: 'gradLogp', access: 'read_write' },
    { name: 'partials', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

/** Tensor names of the policy loss's input-status slots (for `new InputStatus(...)`). */
export const POLICY_LOSS_STATUS_TENSORS = ['logp', 'oldLogp', 'advantages', 'mask'] as const;

/** f32 count of the stats buffer: the loss, then POLICY_LOSS_STATS in order. */
export const POLICY_LOSS_STATS_LENGTH = 1 + POLICY_LOSS_STATS.length;

/** Columns of the per-row partials (the kernel's PARTIALS): Σ m·ℓ, Σ m, then the statistics. */
const PARTIAL_COLUMNS = partialColumns(source);

/**
 * PARTIALS of a policy-loss kernel, whose COL_ columns must be Σ m·ℓ, Σ m, then POLICY_LOSS_STATS
 * in order (the reduce pass turns column k ≥ 2 into statistic k − 2). Checked once, at load.
 */
export function partialColumns(wgsl: string): number {
  // The COL_ names in camelCase: pg_clipfrac → pgClipfrac, clip_ratio/low_mean → clipRatioLowMean.
  const camel = (stat: string) => stat.replace(/[_/]([a-z])/g, (_, c: string) => c.toUpperCase());
  return reducedStats('policy_loss.wgsl', wgsl, POLICY_LOSS_STATS.map(camel)).columns;
}

/** params.loss_type of each loss, read from the kernel's LOSS_ constants. */
const LOSS_CODES = {
  ppo: reflectConstant(source, 'LOSS_PPO'),
  gspoToken: reflectConstant(source, 'LOSS_GSPO_TOKEN'),
  gspoSequence: reflectConstant(source, 'LOSS_GSPO_SEQUENCE'),
  reinforce: reflectConstant(source, 'LOSS_REINFORCE'),
};

function lossTypeCode(o: ResolvedPolicyLossOptions): number {
  if (o.lossType === 'ppo') return LOSS_CODES.ppo;
  if (o.lossType === 'gspo') {
    return o.gspoGradient === 'token' ? LOSS_CODES.gspoToken : LOSS_CODES.gspoSequence;
  }
  return LOSS_CODES.reinforce;
}

/** Unpacks the stats buffer (loss, then POLICY_LOSS_STATS) into named statistics. */
export function readPolicyLossStats(values: Float32Array): {
  loss: number;
  stats: PolicyLossStats;
} {
  const stats = Object.fromEntries(
    POLICY_LOSS_STATS.map((name, k) => [name, values[k + 1]!]),
  ) as PolicyLossStats;
  return { loss: values[0]!, stats };
}

/**
 * Records the policy loss of resident buffers into `batch`. logp, oldLogp, advantages, mask:
 * (rows, cols) f32 → tokenLoss, gradLogp: (rows, cols) f32; stats: POLICY_LOSS_STATS_LENGTH f32
 * (loss, then the statistics; unpack with readPolicyLossStats). `status` (from
 * `new InputStatus(gpu, 'policyLoss', POLICY_LOSS_STATUS_TENSORS)`) receives non-finite inputs;
 * without it they go unreported. The mask must hold only 0 and 1.
 */
export async function encodePolicyLoss(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    logp: GPUBuffer;
    oldLogp: GPUBuffer;
    advantages: GPUBuffer;
    mask: GPUBuffer;
    tokenLoss: GPUBuffer;
    gradLogp: GPUBuffer;
    stats: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: PolicyLossGpuOptions = {},
): Promise<void> {
  checkInt(OP, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(OP, 'cols', cols, 1, 2 ** 31 - 1);
  const o = resolvePolicyLossOptions(options);
  checkBindingSize(gpu, rows, cols, 'policyLoss logp');
  const rowSize = rowWorkgroupSize(OP, gpu, cols, options.workgroupSize);
  const partials = scratchBuffer(gpu, 'policy loss partials', rows * PARTIAL_COLUMNS * 4);
  const rowScale = scratchBuffer(gpu, 'policy loss row scale', rows * 4);
  const pipeline = await gpu.pipelines.get(policyLossRowsKernel, { WORKGROUP_SIZE: rowSize });
  batch.dispatch(policyLossRowsKernel, {
    pipeline,
    buffers: {
      logp: buffers.logp,
      oldLogp: buffers.oldLogp,
      advantages: buffers.advantages,
      mask: buffers.mask,
      tokenLoss: buffers.tokenLoss,
      gradLogp: buffers.gradLogp,
      partials,
      status: buffers.status ?? unusedStatusBuffer(gpu),
    },
    uniforms: {
      rows,
      cols,
      loss_type: lossTypeCode(o),
      clip_low: o.clipLow,
      clip_high: o.clipHigh,
      // 0 means off in the kernel; every valid value is > 0.
      dual_clip: o.lossType === 'ppo' ? (o.dualClip ?? 0) : 0,
      log_ratio_clamp: o.lossType === 'ppo' ? (o.logRatioClamp ?? 0) : 0,
      delta: o.delta ?? 0,
    },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  const aggregation = {
    mode: o.aggregation,
    lossScaleFactor: o.lossScaleFactor,
    maxCompletionLength: o.maxCompletionLength,
    // Which rows count in R of the seq-mean-token-sum modes follows the loss's flavor.
    flavor: o.flavor,
  };
  await encodeLossReduce(
    gpu,
    batch,
    { partials, out: buffers.stats, rowScale },
    rows,
    cols,
    PARTIAL_COLUMNS,
    aggregation,
    options.workgroupSize,
  );
  await encodeScaleRows(gpu, batch, { values: buffers.gradLogp, rowScale }, rows, cols);
}

/**
 * Convenience path: check, upload, run, read back (one sync point). Shapes, options and the 0/1
 * mask are checked on the CPU before any work; NaN/Inf inputs are found by the kernel and thrown
 * after it ran, as the same OpInputError the CPU reference throws.
 */
export async function policyLossGpu(
  gpu: GpuContext,
  logp: Float32Array,
  oldLogp: Float32Array,
  advantages: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: PolicyLossGpuOptions = {},
): Promise<PolicyLossResult> {
  checkPolicyLossInput(logp, oldLogp, advantages, mask, rows, cols, options, { finite: false });
  checkBindingSize(gpu, rows, cols, 'policyLoss logp');
  const tokens = maskTokens(mask);
  const n = rows * cols;
  const status = new InputStatus(gpu, OP, POLICY_LOSS_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logp: pooled.upload(logp, 'logp'),
      oldLogp: pooled.upload(oldLogp, 'oldLogp'),
      advantages: pooled.upload(advantages, 'advantages'),
      mask: pooled.upload(mask, 'mask'),
      tokenLoss: pooled.storage(n, 'token loss'),
      gradLogp: pooled.storage(n, 'grad logp'),
      stats: pooled.storage(POLICY_LOSS_STATS_LENGTH, 'policy loss stats'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP);
    await encodePolicyLoss(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [stats, tokenLoss, gradLogp] = await readChecked(gpu, status, [
      [buffers.stats, POLICY_LOSS_STATS_LENGTH],
      [buffers.tokenLoss, n],
      [buffers.gradLogp, n],
    ]);
    return {
      ...readPolicyLossStats(stats),
      tokenLoss,
      gradLogp,
      tokens,
      emptyMask: tokens === 0,
    };
  } finally {
    pooled.release();
    status.release();
  }
}
