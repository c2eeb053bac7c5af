/**
 * GPU wrapper for kernels/whiten_stats.wgsl (entry points `partial`, `merge`) and
 * kernels/whiten_apply.wgsl; CPU twin: src/ops/whiten.ts.
 * Dispatches: `partial` — one workgroup per chunk of WHITEN_CHUNK elements; `merge` — one
 * workgroup; apply — one invocation per element. The stats stay on the GPU (a (8) f32 buffer:
 * n, mean, M2, min, max) for the apply pass and for other kernels (the 'batch' std of group
 * advantages).
 */
import statsSource from '../../../kernels/whiten_stats.wgsl?raw';
import applySource from '../../../kernels/whiten_apply.wgsl?raw';
import layoutSource from '../../../kernels/lib/whiten_stats_layout.wgsl?raw';
import {
  type WhitenOptions,
  type WhitenResult,
  type WhitenStats,
  checkWhitenInput,
  resolveWhitenOptions,
  varianceFromMoments,
} from '../../ops/whiten';
import { checkInt } from '../../ops/validate';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { statLayout } from '../stat-record';
import { checkBindingSize, invocationGrid } from './advantage-dispatch';
import { PooledBuffers, readChecked } from './run-convenience';

/** Elements reduced by one `partial` workgroup, the same on every adapter. */
export const WHITEN_CHUNK = 4096;

/**
 * Threads × items per thread of the stats kernels, always one WHITEN_CHUNK. Software adapters get
 * 32 threads: every barrier of the tree reductions costs a context switch per invocation there
 * (the same trade-off as defaultRowWorkgroupSize).
 */
function statsConstants(gpu: GpuContext): { WORKGROUP_SIZE: number; ITEMS_PER_THREAD: number } {
  const software = gpu.summary.isFallbackAdapter || gpu.summary.architecture === 'swiftshader';
  const threads = software ? 32 : 256;
  return { WORKGROUP_SIZE: threads, ITEMS_PER_THREAD: WHITEN_CHUNK / threads };
}
/** f32 elements of the stats buffer: n, mean, M2, min, max, then padding. */
export const WHITEN_STATS_LENGTH = 8;
/**
 * Where the stats kernel writes each statistic, and whiten_apply and group_advantages read it:
 * declared once in kernels/lib/whiten_stats_layout.wgsl, which their sources start with.
 */
export const WHITEN_STATS_LAYOUT_WGSL = layoutSource;
export const WHITEN_STATS = statLayout(layoutSource, 'STAT_', ['count', 'mean', 'm2', 'lo', 'hi']);
const APPLY_WORKGROUP_SIZE = 256;

const statsDecl = {
  source: INPUT_STATUS_WGSL + layoutSource + statsSource,
  uniforms: [
    { name: 'n', type: 'u32' },
    { name: 'num_chunks', type: 'u32' },
    { name: 'has_mask', type: 'u32' },
    { name: 'status_slot', type: 'u32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'partials', access: 'read_write' },
    { name: 'stats', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
} as const;

export const whitenPartialKernel = defineKernel({
  ...statsDecl,
  name: 'whiten_stats.partial',
  entryPoint: 'partial',
});
export const whitenMergeKernel = defineKernel({
  ...statsDecl,
  name: 'whiten_stats.merge',
  entryPoint: 'merge',
});

export const whitenApplyKernel = defineKernel({
  name: 'whiten_apply',
  source: layoutSource + applySource,
  uniforms: [
    { name: 'n', type: 'u32' },
    { name: 'unbiased', type: 'u32' },
    { name: 'clamp', type: 'u32' },
    { name: 'epsilon', type: 'f32' },
    { name: 'shift_mean', type: 'u32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'stats', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

/** Status slots of whitenGpu(). */
export const WHITEN_STATUS_TENSORS = ['x'] as const;

/** Chunks of `partial` for n elements: the partials buffer holds 5 f32 per chunk. */
export function whitenChunks(n: number): number {
  return Math.max(1, Math.ceil(n / WHITEN_CHUNK));
}

export interface WhitenStatsBuffers {
  /** (n) f32. */
  x: GPUBuffer;
  /** (n) f32 0/1; omit to count every element. */
  mask?: GPUBuffer;
  /** Scratch: at least whitenChunks(n) × 5 f32. */
  partials: GPUBuffer;
  /** Output: WHITEN_STATS_LENGTH f32. */
  stats: GPUBuffer;
  /** An InputStatus buffer; x is checked in slot `statusSlot`. */
  status: GPUBuffer;
}

/** Records the masked moments of `x` (n elements) into buffers.stats. */
export async function encodeWhitenStats(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: WhitenStatsBuffers,
  n: number,
  statusSlot = 0,
): Promise<void> {
  checkInt('whiten', 'n', n, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, n, 'whiten x');
  const chunks = whitenChunks(n);
  const constants = statsConstants(gpu);
  const [partial, merge] = await Promise.all([
    gpu.pipelines.get(whitenPartialKernel, constants),
    gpu.pipelines.get(whitenMergeKernel, constants),
  ]);
  const bound = {
    x: buffers.x,
    // A read-only stand-in when unmasked: the kernel does not read it (has_mask = 0).
    mask: buffers.mask ?? buffers.x,
    partials: buffers.partials,
    stats: buffers.stats,
    status: buffers.status,
  };
  const uniforms = {
    n,
    num_chunks: chunks,
    has_mask: buffers.mask ? 1 : 0,
    status_slot: statusSlot,
  };
  batch.dispatch(whitenPartialKernel, {
    pipeline: partial,
    buffers: bound,
    uniforms,
    workgroups: invocationGrid(gpu, chunks, 1),
  });
  // Dispatches in a pass see each other's writes in order: merge reads every partial.
  batch.dispatch(whitenMergeKernel, { pipeline: merge, buffers: bound, uniforms, workgroups: [1] });
}

export interface WhitenBuffers {
  x: GPUBuffer;
  mask: GPUBuffer;
  partials: GPUBuffer;
  stats: GPUBuffer;
  /** Output (n) f32; must not alias x. */
  out: GPUBuffer;
  status: GPUBuffer;
}

/** Records stats + apply for resident (rows, cols) buffers. Mask values are trusted to be 0/1. */
export async function encodeWhiten(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: WhitenBuffers,
  rows: number,
  cols: number,
  options: WhitenOptions = {},
  statusSlot = 0,
): Promise<void> {
  const settings = resolveWhitenOptions('whiten', options);
  checkInt('whiten', 'rows', rows, 1, 2 ** 31 - 1);
  checkInt('whiten', 'cols', cols, 1, 2 ** 31 - 1);
  const n = rows * cols;
  await encodeWhitenStats(gpu, batch, buffers, n, statusSlot);
  const pipeline = await gpu.pipelines.get(whitenApplyKernel, {
    WORKGROUP_SIZE: APPLY_WORKGROUP_SIZE,
  });
  batch.dispatch(whitenApplyKernel, {
    pipeline,
    buffers: { x: buffers.x, mask: buffers.mask, stats: buffers.stats, out: buffers.out },
    uniforms: {
      n,
      unbiased: settings.unbiased ? 1 : 0,
      clamp: settings.epsilonMode === 'clamp' ? 1 : 0,
      epsilon: settings.epsilon,
      shift_mean: settings.shiftMean ? 1 : 0,
    },
    workgroups: invocationGrid(gpu, n, APPLY_WORKGROUP_SIZE),
  });
}

/** WhitenStats from the (read-back) stats buffer, with the same rules as the CPU op. */
export function whitenStatsFromBuffer(words: Float32Array, unbiased: boolean): WhitenStats {
  const { count, mean, m2 } = WHITEN_STATS.read(words);
  return {
    count,
    mean,
    variance: varianceFromMoments(count, m2, unbiased),
    emptyMask: count === 0,
  };
}

/** Convenience path: check, upload, run, read back. Same checks and options as whiten(). */
export async function whitenGpu(
  gpu: GpuContext,
  x: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: WhitenOptions = {},
): Promise<WhitenResult> {
  const settings = checkWhitenInput(x, mask, rows, cols, options, false);
  const n = rows * cols;
  checkBindingSize(gpu, n, 'whiten x');
  const status = new InputStatus(gpu, 'whiten', WHITEN_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers: WhitenBuffers = {
      x: pooled.upload(x, 'whiten x'),
      mask: pooled.upload(mask, 'whiten mask'),
      partials: pooled.storage(whitenChunks(n) * 5, 'whiten partials'),
      stats: pooled.storage(WHITEN_STATS_LENGTH, 'whiten stats'),
      out: pooled.storage(n, 'whiten out'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('whiten');
    await encodeWhiten(gpu, batch, buffers, rows, cols, settings);
    batch.submit();
    const [output, words] = await readChecked(gpu, status, [
      [buffers.out, n],
      [buffers.stats, WHITEN_STATS_LENGTH],
    ]);
    return { output, stats: whitenStatsFromBuffer(words, settings.unbiased) };
  } finally {
    pooled.release();
    status.release();
  }
}
