/**
 * GPU wrapper for kernels/group_advantages.wgsl (GRPO family and RLOO); CPU twin:
 * src/ops/group-advantages.ts. Dispatch: one invocation per group; with stdNormalization 'batch'
 * the whole-batch moments of the scores come first (kernels/whiten_stats.wgsl, unmasked).
 */
import source from '../../../kernels/group_advantages.wgsl?raw';
import {
  type GroupAdvantageOptions,
  type GroupAdvantageResult,
  type GroupAdvantageStats,
  type GroupCoreSettings,
  type RlooOptions,
  checkGroupAdvantagesInput,
  checkGroups,
  checkRlooInput,
  resolveGroupAdvantageOptions,
  resolveRlooOptions,
} from '../../ops/group-advantages';
import { varianceFromMoments } from '../../ops/whiten';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { checkBindingSize, invocationGrid } from './advantage-dispatch';
import { PooledBuffers, readChecked } from './run-convenience';
import {
  WHITEN_STATS,
  WHITEN_STATS_LAYOUT_WGSL,
  WHITEN_STATS_LENGTH,
  encodeWhitenStats,
  whitenChunks,
} from './whiten';
import { statLayout } from '../stat-record';
import { reflectConstant } from '../wgsl-reflect';

const WORKGROUP_SIZE = 64;
/** f32 per group in the group-stats buffer: mean, std, zero-std flag (0/1). */
export const GROUP_STATS_STRIDE = reflectConstant(source, 'STATS_PER_GROUP');
/** Each group's statistics by name, in the kernel's GROUP_ slots. */
const GROUP_STATS = statLayout(source, 'GROUP_', ['mean', 'std', 'zeroStd']);

export const groupAdvantagesKernel = defineKernel({
  name: 'group_advantages',
  source: INPUT_STATUS_WGSL + WHITEN_STATS_LAYOUT_WGSL + source,
  uniforms: [
    { name: 'num_groups', type: 'u32' },
    { name: 'group_size', type: 'u32' },
    { name: 'rloo', type: 'u32' },
    { name: 'std_mode', type: 'u32' },
    { name: 'unbiased', type: 'u32' },
    { name: 'epsilon', type: 'f32' },
    { name: 'singles_mean0', type: 'u32' },
    { name: 'status_slot', type: 'u32' },
  ],
  storage: [
    { name: 'scores', access: 'read' },
    { name: 'batch_stats', access: 'read' },
    { name: 'advantages', access: 'read_write' },
    { name: 'group_stats', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

const STD_MODE = { none: 0, group: 1, batch: 2 } as const;

export interface GroupAdvantageBuffers {
  /** (B) f32. */
  scores: GPUBuffer;
  /** Output (B) f32. */
  advantages: GPUBuffer;
  /** Output (numGroups, GROUP_STATS_STRIDE) f32. */
  groupStats: GPUBuffer;
  /** An InputStatus buffer; scores are checked in slot `statusSlot`. */
  status: GPUBuffer;
  /** 'batch' only: scratch of whitenChunks(B) × 5 f32. */
  batchPartials?: GPUBuffer;
  /** 'batch' only: WHITEN_STATS_LENGTH f32, the moments of all B scores. */
  batchStats?: GPUBuffer;
}

/** Records the group kernel (and the batch moments first when needed) with core settings. */
export async function encodeGroupCore(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GroupAdvantageBuffers,
  b: number,
  groupSize: number,
  core: GroupCoreSettings,
  statusSlot = 0,
): Promise<void> {
  const op = core.estimator === 'rloo' ? 'rlooAdvantages' : 'groupAdvantages';
  checkGroups(op, b, groupSize, core.singles !== 'error');
  checkBindingSize(gpu, b, `${op} scores`);
  const isBatch = core.stdNormalization === 'batch';
  if (isBatch) {
    if (!buffers.batchPartials || !buffers.batchStats) {
      throw new Error(
        "encodeGroupCore: stdNormalization 'batch' needs buffers.batchPartials and buffers.batchStats",
      );
    }
    await encodeWhitenStats(
      gpu,
      batch,
      {
        x: buffers.scores,
        partials: buffers.batchPartials,
        stats: buffers.batchStats,
        status: buffers.status,
      },
      b,
      statusSlot,
    );
  }
  const pipeline = await gpu.pipelines.get(groupAdvantagesKernel, { WORKGROUP_SIZE });
  const numGroups = b / groupSize;
  batch.dispatch(groupAdvantagesKernel, {
    pipeline,
    buffers: {
      scores: buffers.scores,
      // A read-only stand-in unless 'batch'; the kernel reads it only when std_mode = 2.
      batch_stats: isBatch ? buffers.batchStats! : buffers.scores,
      advantages: buffers.advantages,
      group_stats: buffers.groupStats,
      status: buffers.status,
    },
    uniforms: {
      num_groups: numGroups,
      group_size: groupSize,
      rloo: core.estimator === 'rloo' ? 1 : 0,
      std_mode: STD_MODE[core.stdNormalization],
      unbiased: core.stdUnbiased ? 1 : 0,
      epsilon: core.stdEpsilon,
      singles_mean0: core.singles === 'mean0' ? 1 : 0,
      status_slot: statusSlot,
    },
    workgroups: invocationGrid(gpu, numGroups, WORKGROUP_SIZE),
  });
}

/** Records GRPO-family advantages of resident scores (same options as groupAdvantages()). */
export async function encodeGroupAdvantages(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GroupAdvantageBuffers,
  b: number,
  groupSize: number,
  options: GroupAdvantageOptions = {},
): Promise<void> {
  const core = resolveGroupAdvantageOptions(options);
  await encodeGroupCore(gpu, batch, buffers, b, groupSize, core);
}

/** Records RLOO advantages of resident scores (same options as rlooAdvantages()). */
export async function encodeRlooAdvantages(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GroupAdvantageBuffers,
  b: number,
  groupSize: number,
  options: RlooOptions = {},
): Promise<void> {
  await encodeGroupCore(gpu, batch, buffers, b, groupSize, resolveRlooOptions(options));
}

/** GroupAdvantageStats from read-back buffers (group stats; batch moments when 'batch'). */
export function groupStatsFromBuffers(
  groupWords: Float32Array,
  numGroups: number,
  batchWords?: Float32Array,
  unbiased = true,
): GroupAdvantageStats {
  const groupMean = new Float32Array(numGroups);
  const groupStd = new Float32Array(numGroups);
  let zeroStdGroups = 0;
  for (let k = 0; k < numGroups; k++) {
    const at = k * GROUP_STATS_STRIDE;
    const group = GROUP_STATS.read(groupWords.subarray(at, at + GROUP_STATS_STRIDE));
    groupMean[k] = group.mean;
    groupStd[k] = group.std;
    if (group.zeroStd === 1) zeroStdGroups += 1;
  }
  const stats: GroupAdvantageStats = {
    numGroups,
    zeroStdGroups,
    fracRewardZeroStd: zeroStdGroups / numGroups,
    groupMean,
    groupStd,
  };
  if (batchWords) {
    const moments = WHITEN_STATS.read(batchWords);
    const m2 = moments.lo === moments.hi ? 0 : moments.m2; // all scores equal
    stats.batchStd = Math.sqrt(varianceFromMoments(moments.count, m2, unbiased));
  }
  return stats;
}

async function runGroupCore(
  gpu: GpuContext,
  op: string,
  scores: Float32Array,
  groupSize: number,
  core: GroupCoreSettings,
): Promise<GroupAdvantageResult> {
  const b = scores.length;
  const numGroups = b / groupSize;
  checkBindingSize(gpu, b, `${op} scores`);
  const status = new InputStatus(gpu, op, ['scores']);
  const pooled = new PooledBuffers(gpu);
  try {
    const isBatch = core.stdNormalization === 'batch';
    const buffers: GroupAdvantageBuffers = {
      scores: pooled.upload(scores, `${op} scores`),
      advantages: pooled.storage(b, `${op} advantages`),
      groupStats: pooled.storage(numGroups * GROUP_STATS_STRIDE, `${op} group stats`),
      status: status.buffer,
    };
    if (isBatch) {
      buffers.batchPartials = pooled.storage(whitenChunks(b) * 5, `${op} batch partials`);
      buffers.batchStats = pooled.storage(WHITEN_STATS_LENGTH, `${op} batch stats`);
    }
    const batch = gpu.beginBatch(op);
    await encodeGroupCore(gpu, batch, buffers, b, groupSize, core);
    batch.submit();
    const [advantages, groupWords, batchWords] = await readChecked(gpu, status, [
      [buffers.advantages, b],
      [buffers.groupStats, numGroups * GROUP_STATS_STRIDE],
      buffers.batchStats && [buffers.batchStats, WHITEN_STATS_LENGTH],
    ]);
    const stats = groupStatsFromBuffers(groupWords, numGroups, batchWords, core.stdUnbiased);
    return { advantages, stats };
  } finally {
    pooled.release();
    status.release();
  }
}

/** Convenience path of groupAdvantages(): same checks, options and stats. */
export async function groupAdvantagesGpu(
  gpu: GpuContext,
  scores: Float32Array,
  groupSize: number,
  options: GroupAdvantageOptions = {},
): Promise<GroupAdvantageResult> {
  const core = checkGroupAdvantagesInput(scores, groupSize, options, false);
  return runGroupCore(gpu, 'groupAdvantages', scores, groupSize, core);
}

/** Convenience path of rlooAdvantages(): same checks, options and stats. */
export async function rlooAdvantagesGpu(
  gpu: GpuContext,
  scores: Float32Array,
  groupSize: number,
  options: RlooOptions = {},
): Promise<GroupAdvantageResult> {
  const core = checkRlooInput(scores, groupSize, options, false);
  return runGroupCore(gpu, 'rlooAdvantages', scores, groupSize, core);
}
