/**
 * How the row kernels of the norms (LayerNorm, RMSNorm: forward and dx) split a row over threads,
 * and how their column-sum kernels (dγ, dβ, dw) tile the columns. Shared so that every norm is
 * dispatched the same way (src/gpu/kernels/nn/layer-norm.ts, rms-norm.ts).
 */
import { checkInt, checkOneOf } from '../../../ops/validate';
import type { AdapterSummary } from '../../adapter-summary';
import { type BufferRef, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { checkBindingSize } from '../advantage-dispatch';
import { checkRefElements } from './add';

/** Threads per workgroup of the row kernels (forward, dx). */
const ROW_KERNEL_WORKGROUP_SIZE = 64;

export const ROW_THREADS = [1, 2, 4, 8, 16, 32, 64] as const;
export type RowThreads = (typeof ROW_THREADS)[number];

/**
 * Threads sharing a row in the forward and dx kernels. On a software adapter (SwiftShader) each
 * barrier and each workgroup is a context switch on the CPU: one thread per row, no barriers, ran
 * the LayerNorm forward several times faster than a 32-thread workgroup per row. On hardware,
 * 32–64 threads per row keep loads coalesced.
 */
export function defaultThreadsPerRow(summary: AdapterSummary, cols: number): RowThreads {
  if (summary.isFallbackAdapter || summary.architecture === 'swiftshader') return 1;
  return cols <= 256 ? 32 : 64;
}

/** GPU-only tuning; the CPU twins have no counterpart. */
export interface RowSplitOptions {
  /** Threads per row, one of 1, 2, 4, …, 64. Default: defaultThreadsPerRow(). */
  threadsPerRow?: RowThreads;
}

/** The override constants of a row kernel. */
export function rowKernelConstants(
  gpu: GpuContext,
  op: string,
  cols: number,
  options: RowSplitOptions,
): { WORKGROUP_SIZE: number; THREADS_PER_ROW: number } {
  const threadsPerRow = options.threadsPerRow ?? defaultThreadsPerRow(gpu.summary, cols);
  checkOneOf(op, 'threadsPerRow', threadsPerRow, ROW_THREADS);
  return { WORKGROUP_SIZE: ROW_KERNEL_WORKGROUP_SIZE, THREADS_PER_ROW: threadsPerRow };
}

/** Workgroups of the row kernels: 64 / threadsPerRow rows each, over (x, y). */
export function rowGroups(gpu: GpuContext, rows: number, threadsPerRow: number): [number, number] {
  return workgroupGrid(
    Math.ceil(rows / (ROW_KERNEL_WORKGROUP_SIZE / threadsPerRow)),
    gpu.summary.limits.maxComputeWorkgroupsPerDimension,
  );
}

/** Columns per workgroup and row lanes per column of the column-sum kernels (32 × 8 = 256). */
export const PARAMS_TILE_COLS = 32;
export const PARAMS_ROW_LANES = 8;

/** Workgroups of a column-sum kernel: one per PARAMS_TILE_COLS columns, over (x, y). */
export function columnTileGroups(gpu: GpuContext, cols: number): [number, number] {
  return workgroupGrid(
    Math.ceil(cols / PARAMS_TILE_COLS),
    gpu.summary.limits.maxComputeWorkgroupsPerDimension,
  );
}

/** rows and cols are positive integers and a (rows, C) tensor fits one binding. */
export function checkRowShape(gpu: GpuContext, op: string, rows: number, cols: number): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, rows * cols, `${op} (rows, C) tensors`);
}

/** Checks that each named binding holds its number of f32. */
export function checkSizes(op: string, sizes: [string, BufferRef, number][]): void {
  for (const [name, ref, elements] of sizes) checkRefElements(op, name, ref, elements);
}
