/**
 * GPU wrappers for RMSNorm (Llama, Qwen2, Qwen3; per head for Qwen3's q/k norm); CPU twin:
 * src/ops/nn/rms-norm.ts.
 *
 *   forward  kernels/nn/rms_norm.wgsl: rows split over threads as LayerNorm's (row-split.ts);
 *            reads x twice (Σ x², write), writes out and rstd.
 *   backward kernels/nn/rms_norm_backward.wgsl (dx, = or +=): reads dout and x twice, writes dx.
 *            kernels/nn/rms_norm_backward_params.wgsl (dw): column sums in a fixed order, no
 *            atomics, so the same bits on every run.
 *
 *   x, out, dout, dx: (rows, C)   w, dw: (C)   rstd: (rows)
 */
import forwardSource from '../../../../kernels/nn/rms_norm.wgsl?raw';
import backwardSource from '../../../../kernels/nn/rms_norm_backward.wgsl?raw';
import backwardParamsSource from '../../../../kernels/nn/rms_norm_backward_params.wgsl?raw';
import { checkRmsNormBackwardInput, checkRmsNormInput } from '../../../ops/nn/rms-norm';
import { checkOneOf, checkRange } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { ROW_SUM_WGSL } from '../../wgsl-lib';
import { PooledBuffers } from '../run-convenience';
import {
  PARAMS_ROW_LANES,
  PARAMS_TILE_COLS,
  checkRowShape,
  checkSizes,
  columnTileGroups,
  rowGroups,
  rowKernelConstants,
  type RowSplitOptions,
} from './row-split';

export const rmsNormForwardKernel = defineKernel({
  name: 'rms_norm',
  source: ROW_SUM_WGSL + forwardSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'eps', type: 'f32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'w', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'rstd', access: 'read_write' },
  ],
});

export const rmsNormBackwardKernel = defineKernel({
  name: 'rms_norm_backward',
  source: ROW_SUM_WGSL + backwardSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'x', access: 'read' },
    { name: 'w', access: 'read' },
    { name: 'rstd', access: 'read' },
    { name: 'dx', access: 'read_write' },
  ],
});

export const rmsNormBackwardParamsKernel = defineKernel({
  name: 'rms_norm_backward_params',
  source: backwardParamsSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'x', access: 'read' },
    { name: 'rstd', access: 'read' },
    { name: 'dw', access: 'read_write' },
  ],
});

export interface RmsNormForwardBuffers {
  x: BufferRef;
  w: BufferRef;
  out: BufferRef;
  rstd: BufferRef;
}

export interface RmsNormBackwardBuffers {
  dout: BufferRef;
  x: BufferRef;
  w: BufferRef;
  rstd: BufferRef;
  dx: BufferRef;
  /** Left out when the gain is frozen (LoRA trains adapters only): then no dw is computed. */
  dw?: BufferRef;
}

export interface RmsNormBackwardOptions extends RowSplitOptions {
  /** dx += the norm's input gradient instead of dx = … (the residual stream's). Default false. */
  accumulateDx?: boolean;
}

/**
 * Records out, rstd = RMSNorm(x; w). The outputs (which may share a buffer) must be in another
 * buffer than the inputs: WebGPU rejects one buffer bound writable and read.
 */
export async function encodeRmsNormForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: RmsNormForwardBuffers,
  shape: { rows: number; cols: number; eps: number },
  options: RowSplitOptions = {},
): Promise<void> {
  const op = 'rmsNormForward';
  const { rows, cols, eps } = shape;
  checkRowShape(gpu, op, rows, cols);
  checkRange(op, 'eps', eps, 0, Infinity, { lowOpen: true });
  checkSizes(op, [
    ['x', buffers.x, rows * cols],
    ['w', buffers.w, cols],
    ['out', buffers.out, rows * cols],
    ['rstd', buffers.rstd, rows],
  ]);
  const constants = rowKernelConstants(gpu, op, cols, options);
  const pipeline = await gpu.pipelines.get(rmsNormForwardKernel, constants);
  batch.dispatch(rmsNormForwardKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols, eps },
    workgroups: rowGroups(gpu, rows, constants.THREADS_PER_ROW),
  });
}

/**
 * Records dx (= or +=) and, when `buffers.dw` is given, dw: two independent dispatches. The
 * outputs must be in another buffer than the inputs and must not overlap each other.
 */
export async function encodeRmsNormBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: RmsNormBackwardBuffers,
  shape: { rows: number; cols: number },
  options: RmsNormBackwardOptions = {},
): Promise<void> {
  const op = 'rmsNormBackward';
  const { rows, cols } = shape;
  checkRowShape(gpu, op, rows, cols);
  checkOneOf(op, 'accumulateDx', options.accumulateDx, [undefined, false, true]);
  const n = rows * cols;
  const { dout, x, w, rstd, dx, dw } = buffers;
  checkSizes(op, [
    ['dout', dout, n],
    ['x', x, n],
    ['w', w, cols],
    ['rstd', rstd, rows],
    ['dx', dx, n],
    ...(dw ? [['dw', dw, cols] as [string, BufferRef, number]] : []),
  ]);
  const constants = rowKernelConstants(gpu, op, cols, options);
  const dxPipeline = await gpu.pipelines.get(rmsNormBackwardKernel, {
    ...constants,
    ACCUMULATE: options.accumulateDx ? 1 : 0,
  });
  batch.dispatch(rmsNormBackwardKernel, {
    pipeline: dxPipeline,
    buffers: { dout, x, w, rstd, dx },
    uniforms: { rows, cols },
    workgroups: rowGroups(gpu, rows, constants.THREADS_PER_ROW),
  });
  if (!dw) return;
  const paramsPipeline = await gpu.pipelines.get(rmsNormBackwardParamsKernel, {
    TILE_COLS: PARAMS_TILE_COLS,
    ROW_LANES: PARAMS_ROW_LANES,
  });
  batch.dispatch(rmsNormBackwardParamsKernel, {
    pipeline: paramsPipeline,
    buffers: { dout, x, rstd, dw },
    uniforms: { rows, cols },
    workgroups: columnTileGroups(gpu, cols),
  });
}

/** Convenience path of rmsNormForward(): the CPU twin's checks, one sync point. */
export async function rmsNormForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  w: Float32Array,
  rows: number,
  cols: number,
  eps: number,
  options: RowSplitOptions = {},
): Promise<{ out: Float32Array; rstd: Float32Array }> {
  checkRmsNormInput(x, w, rows, cols, eps);
  checkRowShape(gpu, 'rmsNormForward', rows, cols);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      x: pooled.upload(x, 'rmsNorm x'),
      w: pooled.upload(w, 'rmsNorm w'),
      out: pooled.storage(rows * cols, 'rmsNorm out'),
      rstd: pooled.storage(rows, 'rmsNorm rstd'),
    };
    const batch = gpu.beginBatch('rmsNormForward');
    await encodeRmsNormForward(gpu, batch, buffers, { rows, cols, eps }, options);
    batch.submit();
    const [out, rstd] = await Promise.all([
      gpu.readF32(buffers.out, rows * cols),
      gpu.readF32(buffers.rstd, rows),
    ]);
    return { out, rstd };
  } finally {
    pooled.release();
  }
}

/** Convenience path of rmsNormBackward(): the CPU twin's checks, one sync point. */
export async function rmsNormBackwardGpu(
  gpu: GpuContext,
  dout: Float32Array,
  x: Float32Array,
  w: Float32Array,
  rstd: Float32Array,
  rows: number,
  cols: number,
  options: RowSplitOptions = {},
): Promise<{ dx: Float32Array; dw: Float32Array }> {
  checkRmsNormBackwardInput(dout, x, w, rstd, rows, cols);
  checkRowShape(gpu, 'rmsNormBackward', rows, cols);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dout: pooled.upload(dout, 'rmsNorm dout'),
      x: pooled.upload(x, 'rmsNorm x'),
      w: pooled.upload(w, 'rmsNorm w'),
      rstd: pooled.upload(rstd, 'rmsNorm rstd'),
      dx: pooled.storage(rows * cols, 'rmsNorm dx'),
      dw: pooled.storage(cols, 'rmsNorm dw'),
    };
    const batch = gpu.beginBatch('rmsNormBackward');
    await encodeRmsNormBackward(gpu, batch, buffers, { rows, cols }, options);
    batch.submit();
    const [dx, dw] = await Promise.all([
      gpu.readF32(buffers.dx, rows * cols),
      gpu.readF32(buffers.dw, cols),
    ]);
    return { dx, dw };
  } finally {
    pooled.release();
  }
}
