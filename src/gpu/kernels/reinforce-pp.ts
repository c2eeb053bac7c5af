/**
 * GPU wrappers for REINFORCE++: kernels/reinforce_pp_returns.wgsl (one invocation per row)
 * followed by the whitening kernels; and REINFORCE++-baseline: broadcast_sum_tokens →
 * group_advantages (plain centering) → broadcast_tokens → whitening, all in one command batch.
 * CPU twins: src/ops/reinforce-pp.ts.
 */
import source from '../../../kernels/reinforce_pp_returns.wgsl?raw';
import {
  type ReinforcePPBaselineOptions,
  type ReinforcePPBaselineResult,
  type ReinforcePPOptions,
  type ReinforcePPResult,
  type ReturnsOptions,
  checkReinforcePPBaselineInput,
  checkReinforcePPInput,
  resolveReinforcePPBaselineOptions,
  resolveReinforcePPOptions,
} from '../../ops/reinforce-pp';
import { checkGroups } from '../../ops/group-advantages';
import { checkInt } from '../../ops/validate';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { checkBindingSize, invocationGrid } from './advantage-dispatch';
import { encodeBroadcastToTokens, encodeSumOverTokens } from './broadcast';
import { GROUP_STATS_STRIDE, encodeGroupCore } from './group-advantages';
import { PooledBuffers, readChecked } from './run-convenience';
import { WHITEN_STATS_LENGTH, encodeWhiten, whitenChunks, whitenStatsFromBuffer } from './whiten';

const WORKGROUP_SIZE = 64;

export const returnsKernel = defineKernel({
  name: 'reinforce_pp_returns',
  source: INPUT_STATUS_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'gamma', type: 'f32' },
    { name: 'reset', type: 'u32' },
    { name: 'status_slot', type: 'u32' },
  ],
  storage: [
    { name: 'rewards', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'returns', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

function checkShape(op: string, gpu: GpuContext, rows: number, cols: number): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, rows * cols, `${op} rewards`);
}

/** Records returns-to-go of resident (rows, cols) rewards; rewards checked in slot `statusSlot`. */
export async function encodeDiscountedReturns(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { rewards: GPUBuffer; mask: GPUBuffer; returns: GPUBuffer; status: GPUBuffer },
  rows: number,
  cols: number,
  options: ReturnsOptions = {},
  statusSlot = 0,
): Promise<void> {
  const { gamma, maskMode } = resolveReinforcePPOptions('discountedReturns', options).returns;
  checkShape('discountedReturns', gpu, rows, cols);
  const pipeline = await gpu.pipelines.get(returnsKernel, { WORKGROUP_SIZE });
  batch.dispatch(returnsKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols, gamma, reset: maskMode === 'reset' ? 1 : 0, status_slot: statusSlot },
    workgroups: invocationGrid(gpu, rows, WORKGROUP_SIZE),
  });
}

/** Convenience path of discountedReturns(): same checks and options, one readback. */
export async function discountedReturnsGpu(
  gpu: GpuContext,
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ReturnsOptions = {},
): Promise<Float32Array> {
  const op = 'discountedReturns';
  const settings = checkReinforcePPInput(op, rewards, mask, rows, cols, options, false);
  checkShape(op, gpu, rows, cols);
  const status = new InputStatus(gpu, op, ['rewards']);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      rewards: pooled.upload(rewards, `${op} rewards`),
      mask: pooled.upload(mask, `${op} mask`),
      returns: pooled.storage(rows * cols, `${op} returns`),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(op);
    await encodeDiscountedReturns(gpu, batch, buffers, rows, cols, settings.returns);
    batch.submit();
    const [returns] = await readChecked(gpu, status, [[buffers.returns, rows * cols]]);
    return returns;
  } finally {
    pooled.release();
    status.release();
  }
}

/** Status slots of encodeReinforcePlusPlus(). */
export const REINFORCE_PP_STATUS_TENSORS = ['rewards', 'returns'] as const;

export interface ReinforcePPBuffers {
  /** (rows, cols) f32. */
  rewards: GPUBuffer;
  /** (rows, cols) 0/1, trusted. */
  mask: GPUBuffer;
  /** Output (rows, cols): returns-to-go. */
  returns: GPUBuffer;
  /** Output (rows, cols): whitened returns, 0 at masked positions. */
  advantages: GPUBuffer;
  /** Scratch: whitenChunks(rows × cols) × 5 f32. */
  partials: GPUBuffer;
  /** Output: WHITEN_STATS_LENGTH f32 (moments of the returns). */
  stats: GPUBuffer;
  /** InputStatus with the slots of REINFORCE_PP_STATUS_TENSORS. */
  status: GPUBuffer;
}

/** Records REINFORCE++ (returns-to-go, then whitening) over resident buffers. */
export async function encodeReinforcePlusPlus(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: ReinforcePPBuffers,
  rows: number,
  cols: number,
  options: ReinforcePPOptions = {},
): Promise<void> {
  const settings = resolveReinforcePPOptions('reinforcePlusPlus', options);
  const { rewards, mask, returns, status } = buffers;
  await encodeDiscountedReturns(
    gpu,
    batch,
    { rewards, mask, returns, status },
    rows,
    cols,
    settings.returns,
    0,
  );
  await encodeWhiten(
    gpu,
    batch,
    {
      x: returns,
      mask,
      partials: buffers.partials,
      stats: buffers.stats,
      out: buffers.advantages,
      status,
    },
    rows,
    cols,
    settings.whiten,
    1,
  );
}

/** Convenience path of reinforcePlusPlus(): same checks, options and stats. */
export async function reinforcePlusPlusGpu(
  gpu: GpuContext,
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ReinforcePPOptions = {},
): Promise<ReinforcePPResult> {
  const op = 'reinforcePlusPlus';
  const settings = checkReinforcePPInput(op, rewards, mask, rows, cols, options, false);
  checkShape(op, gpu, rows, cols);
  const n = rows * cols;
  const status = new InputStatus(gpu, op, REINFORCE_PP_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers: ReinforcePPBuffers = {
      rewards: pooled.upload(rewards, `${op} rewards`),
      mask: pooled.upload(mask, `${op} mask`),
      returns: pooled.storage(n, `${op} returns`),
      advantages: pooled.storage(n, `${op} advantages`),
      partials: pooled.storage(whitenChunks(n) * 5, `${op} partials`),
      stats: pooled.storage(WHITEN_STATS_LENGTH, `${op} stats`),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(op);
    await encodeReinforcePlusPlus(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [advantages, returns, words] = await readChecked(gpu, status, [
      [buffers.advantages, n],
      [buffers.returns, n],
      [buffers.stats, WHITEN_STATS_LENGTH],
    ]);
    return {
      advantages,
      returns,
      whitenStats: whitenStatsFromBuffer(words, settings.whiten.unbiased),
    };
  } finally {
    pooled.release();
    status.release();
  }
}

/** Status slots of encodeReinforcePlusPlusBaseline(). */
export const REINFORCE_PP_BASELINE_STATUS_TENSORS = [
  'rewards',
  'scores',
  'centeredScores',
  'tokens',
] as const;

export interface ReinforcePPBaselineBuffers {
  /** (rows, cols) f32. */
  rewards: GPUBuffer;
  /** (rows, cols) 0/1, trusted. */
  mask: GPUBuffer;
  /** Scratch (rows): Σ_t r_t. */
  scores: GPUBuffer;
  /** Output (rows): scores minus the group mean. */
  centeredScores: GPUBuffer;
  /** Scratch (rows / groupSize, GROUP_STATS_STRIDE). */
  groupStats: GPUBuffer;
  /** Scratch (rows, cols): centered scores broadcast over the mask. */
  tokens: GPUBuffer;
  /** Scratch: whitenChunks(rows × cols) × 5 f32. */
  partials: GPUBuffer;
  /** Output: WHITEN_STATS_LENGTH f32. */
  stats: GPUBuffer;
  /** Output (rows, cols). */
  advantages: GPUBuffer;
  /** InputStatus with the slots of REINFORCE_PP_BASELINE_STATUS_TENSORS. */
  status: GPUBuffer;
}

/** Records REINFORCE++-baseline over resident buffers (four kernels, one batch). */
export async function encodeReinforcePlusPlusBaseline(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: ReinforcePPBaselineBuffers,
  rows: number,
  cols: number,
  groupSize: number,
  options: ReinforcePPBaselineOptions = {},
): Promise<void> {
  const op = 'reinforcePlusPlusBaseline';
  const settings = resolveReinforcePPBaselineOptions(options);
  checkShape(op, gpu, rows, cols);
  checkGroups(op, rows, groupSize, true);
  const { rewards, mask, status } = buffers;
  await encodeSumOverTokens(
    gpu,
    batch,
    { tokens: rewards, sums: buffers.scores, status },
    rows,
    cols,
    0,
  );
  await encodeGroupCore(
    gpu,
    batch,
    {
      scores: buffers.scores,
      advantages: buffers.centeredScores,
      groupStats: buffers.groupStats,
      status,
    },
    rows,
    groupSize,
    settings.center,
    1,
  );
  await encodeBroadcastToTokens(
    gpu,
    batch,
    { seqValues: buffers.centeredScores, mask, out: buffers.tokens, status },
    rows,
    cols,
    2,
  );
  await encodeWhiten(
    gpu,
    batch,
    {
      x: buffers.tokens,
      mask,
      partials: buffers.partials,
      stats: buffers.stats,
      out: buffers.advantages,
      status,
    },
    rows,
    cols,
    settings.whiten,
    3,
  );
}

/** Convenience path of reinforcePlusPlusBaseline(): same checks, options and stats. */
export async function reinforcePlusPlusBaselineGpu(
  gpu: GpuContext,
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  groupSize: number,
  options: ReinforcePPBaselineOptions = {},
): Promise<ReinforcePPBaselineResult> {
  const op = 'reinforcePlusPlusBaseline';
  const settings = checkReinforcePPBaselineInput(
    rewards,
    mask,
    rows,
    cols,
    groupSize,
    options,
    false,
  );
  checkShape(op, gpu, rows, cols);
  const n = rows * cols;
  const status = new InputStatus(gpu, op, REINFORCE_PP_BASELINE_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers: ReinforcePPBaselineBuffers = {
      rewards: pooled.upload(rewards, `${op} rewards`),
      mask: pooled.upload(mask, `${op} mask`),
      scores: pooled.storage(rows, `${op} scores`),
      centeredScores: pooled.storage(rows, `${op} centered`),
      groupStats: pooled.storage((rows / groupSize) * GROUP_STATS_STRIDE, `${op} group stats`),
      tokens: pooled.storage(n, `${op} tokens`),
      partials: pooled.storage(whitenChunks(n) * 5, `${op} partials`),
      stats: pooled.storage(WHITEN_STATS_LENGTH, `${op} stats`),
      advantages: pooled.storage(n, `${op} advantages`),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(op);
    await encodeReinforcePlusPlusBaseline(gpu, batch, buffers, rows, cols, groupSize, options);
    batch.submit();
    const [advantages, centeredScores, words] = await readChecked(gpu, status, [
      [buffers.advantages, n],
      [buffers.centeredScores, rows],
      [buffers.stats, WHITEN_STATS_LENGTH],
    ]);
    return {
      advantages,
      centeredScores,
      whitenStats: whitenStatsFromBuffer(words, settings.whiten.unbiased),
    };
  } finally {
    pooled.release();
    status.release();
  }
}
