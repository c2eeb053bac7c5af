/**
 * GPU wrappers for LayerNorm; CPU twin: src/ops/nn/layer-norm.ts.
 *
 *   forward  kernels/nn/layer_norm.wgsl: threadsPerRow threads per row, 64 / threadsPerRow rows
 *            per workgroup (2D grid past 65,535 groups); reads x three times (Σ, Σ squares,
 *            write), writes out, mean, rstd.
 *   backward kernels/nn/layer_norm_backward.wgsl (dx): rows split the same way; reads dout and x
 *            twice, writes (or adds into) dx.
 *            kernels/nn/layer_norm_backward_params.wgsl (dgamma, dbeta): one workgroup per 32
 *            columns, 8 row lanes per column, lane partials added in a fixed order; reads dout
 *            and x once. No atomics, so the sums are the same bits on every run.
 *
 *   x, out, dout, dx: (rows, C)   gamma, beta, dgamma, dbeta: (C)   mean, rstd: (rows)
 *
 * Any C works (threads stride over the row); rows up to the binding size.
 */
import forwardSource from '../../../../kernels/nn/layer_norm.wgsl?raw';
import backwardSource from '../../../../kernels/nn/layer_norm_backward.wgsl?raw';
import backwardParamsSource from '../../../../kernels/nn/layer_norm_backward_params.wgsl?raw';
import {
  LAYER_NORM_DEFAULT_EPS,
  checkLayerNormBackwardInput,
  checkLayerNormInput,
} from '../../../ops/nn/layer-norm';
import { checkOneOf, checkRange } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { ROW_SUM_WGSL } from '../../wgsl-lib';
import { checkBindingSize } from '../advantage-dispatch';
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

export const layerNormForwardKernel = defineKernel({
  name: 'layer_norm',
  source: ROW_SUM_WGSL + forwardSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'eps', type: 'f32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'gamma', access: 'read' },
    { name: 'beta', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'mean', access: 'read_write' },
    { name: 'rstd', access: 'read_write' },
  ],
});

export const layerNormBackwardKernel = defineKernel({
  name: 'layer_norm_backward',
  source: ROW_SUM_WGSL + backwardSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'x', access: 'read' },
    { name: 'gamma', access: 'read' },
    { name: 'mean', access: 'read' },
    { name: 'rstd', access: 'read' },
    { name: 'dx', access: 'read_write' },
  ],
});

export const layerNormBackwardParamsKernel = defineKernel({
  name: 'layer_norm_backward_params',
  source: backwardParamsSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
  ],
  storage: [
    { name: 'dout', access: 'read' },
    { name: 'x', access: 'read' },
    { name: 'mean', access: 'read' },
    { name: 'rstd', access: 'read' },
    { name: 'dgamma', access: 'read_write' },
    { name: 'dbeta', access: 'read_write' },
  ],
});

export interface LayerNormForwardBuffers {
  x: BufferRef;
  gamma: BufferRef;
  beta: BufferRef;
  out: BufferRef;
  mean: BufferRef;
  rstd: BufferRef;
}

export interface LayerNormBackwardBuffers {
  dout: BufferRef;
  x: BufferRef;
  gamma: BufferRef;
  mean: BufferRef;
  rstd: BufferRef;
  dx: BufferRef;
  dgamma: BufferRef;
  dbeta: BufferRef;
}

export interface LayerNormBackwardOptions extends RowSplitOptions {
  /**
   * dx += the LayerNorm's input gradient instead of dx = …: in a pre-LN block the residual
   * stream's gradient already holds the skip connection's share. Default false.
   */
  accumulateDx?: boolean;
}

/**
 * Records out, mean, rstd = LayerNorm(x; gamma, beta). The outputs (which may share a buffer)
 * must be in another buffer than the inputs: WebGPU rejects one buffer bound writable and read.
 */
export async function encodeLayerNormForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: LayerNormForwardBuffers,
  rows: number,
  cols: number,
  eps: number = LAYER_NORM_DEFAULT_EPS,
  options: RowSplitOptions = {},
): Promise<void> {
  const op = 'layerNormForward';
  checkRowShape(gpu, op, rows, cols);
  checkRange(op, 'eps', eps, 0, Infinity, { lowOpen: true });
  const n = rows * cols;
  checkSizes(op, [
    ['x', buffers.x, n],
    ['gamma', buffers.gamma, cols],
    ['beta', buffers.beta, cols],
    ['out', buffers.out, n],
    ['mean', buffers.mean, rows],
    ['rstd', buffers.rstd, rows],
  ]);
  const constants = rowKernelConstants(gpu, op, cols, options);
  const pipeline = await gpu.pipelines.get(layerNormForwardKernel, constants);
  batch.dispatch(layerNormForwardKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols, eps },
    workgroups: rowGroups(gpu, rows, constants.THREADS_PER_ROW),
  });
}

/**
 * Records dx (= or +=, see options), dgamma and dbeta of LayerNorm: two dispatches, independent
 * of each other. The outputs (which may share a buffer) must be in another buffer than the
 * inputs, and must not overlap each other.
 */
export async function encodeLayerNormBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: LayerNormBackwardBuffers,
  rows: number,
  cols: number,
  options: LayerNormBackwardOptions = {},
): Promise<void> {
  const op = 'layerNormBackward';
  checkRowShape(gpu, op, rows, cols);
  checkOneOf(op, 'accumulateDx', options.accumulateDx, [undefined, false, true]);
  const n = rows * cols;
  checkSizes(op, [
    ['dout', buffers.dout, n],
    ['x', buffers.x, n],
    ['gamma', buffers.gamma, cols],
    ['mean', buffers.mean, rows],
    ['rstd', buffers.rstd, rows],
    ['dx', buffers.dx, n],
    ['dgamma', buffers.dgamma, cols],
    ['dbeta', buffers.dbeta, cols],
  ]);
  const { dout, x, gamma, mean, rstd, dx, dgamma, dbeta } = buffers;
  const constants = rowKernelConstants(gpu, op, cols, options);
  const [dxPipeline, paramsPipeline] = await Promise.all([
    gpu.pipelines.get(layerNormBackwardKernel, {
      ...constants,
      ACCUMULATE: options.accumulateDx ? 1 : 0,
    }),
    gpu.pipelines.get(layerNormBackwardParamsKernel, {
      TILE_COLS: PARAMS_TILE_COLS,
      ROW_LANES: PARAMS_ROW_LANES,
    }),
  ]);
  batch.dispatch(layerNormBackwardKernel, {
    pipeline: dxPipeline,
    buffers: { dout, x, gamma, mean, rstd, dx },
    uniforms: { rows, cols },
    workgroups: rowGroups(gpu, rows, constants.THREADS_PER_ROW),
  });
  batch.dispatch(layerNormBackwardParamsKernel, {
    pipeline: paramsPipeline,
    buffers: { dout, x, mean, rstd, dgamma, dbeta },
    uniforms: { rows, cols },
    workgroups: columnTileGroups(gpu, cols),
  });
}

/** Convenience path of layerNormForward(): same checks, one sync point for the three outputs. */
export async function layerNormForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  gamma: Float32Array,
  beta: Float32Array,
  rows: number,
  cols: number,
  eps: number = LAYER_NORM_DEFAULT_EPS,
  options: RowSplitOptions = {},
): Promise<{ out: Float32Array; mean: Float32Array; rstd: Float32Array }> {
  checkLayerNormInput(x, gamma, beta, rows, cols, eps);
  checkBindingSize(gpu, rows * cols, 'layerNormForward (rows, C) tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      x: pooled.upload(x, 'layerNorm x'),
      gamma: pooled.upload(gamma, 'layerNorm gamma'),
      beta: pooled.upload(beta, 'layerNorm beta'),
      out: pooled.storage(rows * cols, 'layerNorm out'),
      mean: pooled.storage(rows, 'layerNorm mean'),
      rstd: pooled.storage(rows, 'layerNorm rstd'),
    };
    const batch = gpu.beginBatch('layerNormForward');
    await encodeLayerNormForward(gpu, batch, buffers, rows, cols, eps, options);
    batch.submit();
    const [out, mean, rstd] = await Promise.all([
      gpu.readF32(buffers.out, rows * cols),
      gpu.readF32(buffers.mean, rows),
      gpu.readF32(buffers.rstd, rows),
    ]);
    return { out, mean, rstd };
  } finally {
    pooled.release();
  }
}

/** Convenience path of layerNormBackward(): same checks, one sync point for the three outputs. */
export async function layerNormBackwardGpu(
  gpu: GpuContext,
  dout: Float32Array,
  x: Float32Array,
  gamma: Float32Array,
  mean: Float32Array,
  rstd: Float32Array,
  rows: number,
  cols: number,
  options: RowSplitOptions = {},
): Promise<{ dx: Float32Array; dgamma: Float32Array; dbeta: Float32Array }> {
  checkLayerNormBackwardInput(dout, x, gamma, mean, rstd, rows, cols);
  checkBindingSize(gpu, rows * cols, 'layerNormBackward (rows, C) tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dout: pooled.upload(dout, 'layerNorm dout'),
      x: pooled.upload(x, 'layerNorm x'),
      gamma: pooled.upload(gamma, 'layerNorm gamma'),
      mean: pooled.upload(mean, 'layerNorm mean'),
      rstd: pooled.upload(rstd, 'layerNorm rstd'),
      dx: pooled.storage(rows * cols, 'layerNorm dx'),
      dgamma: pooled.storage(cols, 'layerNorm dgamma'),
      dbeta: pooled.storage(cols, 'layerNorm dbeta'),
    };
    const batch = gpu.beginBatch('layerNormBackward');
    await encodeLayerNormBackward(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [dx, dgamma, dbeta] = await Promise.all([
      gpu.readF32(buffers.dx, rows * cols),
      gpu.readF32(buffers.dgamma, cols),
      gpu.readF32(buffers.dbeta, cols),
    ]);
    return { dx, dgamma, dbeta };
  } finally {
    pooled.release();
  }
}
