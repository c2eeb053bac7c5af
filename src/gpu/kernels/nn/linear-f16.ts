/**
 * GPU wrappers for the linear layer on f16-stored weights: kernels/nn/linear_f16.wgsl (tiled:
 * the forward for many rows, and dx = dy·W) and kernels/nn/linear_f16_gemv.wgsl (the forward for
 * few rows, decoding). CPU twin: src/ops/nn/linear-f16.ts.
 *
 *   x: (rows, inDim)   w: (outDim · inDim / 2) u32 f16 pairs of W (outDim, inDim)   b: (outDim)
 *   y, dy: (rows, outDim)   dx: (rows, inDim)
 *
 * Dispatch: tiled, one 16 × 16-thread workgroup per 64 × 64 output tile, grid (⌈n/64⌉, ⌈m/64⌉);
 * GEMV, one 256-thread workgroup per OUTS output features, grid ⌈outDim / OUTS⌉ over (x, y).
 * The forward picks GEMV up to LINEAR_F16_GEMV_MAX_ROWS rows on hardware and the tiled kernel
 * otherwise (linearF16KernelFor); `kernel` forces one (tests, benchmarks).
 */
import gemvSource from '../../../../kernels/nn/linear_f16_gemv.wgsl?raw';
import tiledSource from '../../../../kernels/nn/linear_f16.wgsl?raw';
import {
  checkLinearF16BackwardInput,
  checkLinearF16ForwardInput,
  checkLinearF16Shape,
} from '../../../ops/nn/linear-f16';
import type { LinearShape } from '../../../ops/nn/linear';
import { checkOneOf } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { AdapterSummary } from '../../adapter-summary';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { workgroupGrid } from '../../batch';
import { reflectConstant } from '../../wgsl-reflect';
import { PooledBuffers } from '../run-convenience';
import { type ColumnWindow, checkBindings, windowElements, windowUniforms } from './matmul';

export const linearF16Kernel = defineKernel({
  name: 'linear_f16',
  source: tiledSource,
  uniforms: [
    { name: 'm', type: 'u32' },
    { name: 'k', type: 'u32' },
    { name: 'n', type: 'u32' },
    { name: 'has_bias', type: 'u32' },
    { name: 'accumulate', type: 'u32' },
    { name: 'a_stride', type: 'u32' },
    { name: 'a_col', type: 'u32' },
    { name: 'out_stride', type: 'u32' },
    { name: 'out_col', type: 'u32' },
  ],
  storage: [
    { name: 'a', access: 'read' },
    { name: 'w', access: 'read' },
    { name: 'bias', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

export const linearF16GemvKernel = defineKernel({
  name: 'linear_f16_gemv',
  source: gemvSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'in_dim', type: 'u32' },
    { name: 'out_dim', type: 'u32' },
    { name: 'has_bias', type: 'u32' },
    { name: 'y_stride', type: 'u32' },
    { name: 'y_col', type: 'u32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'w', access: 'read' },
    { name: 'bias', access: 'read' },
    { name: 'y', access: 'read_write' },
  ],
});

/** Output rows and columns per tiled workgroup (TILE). */
const TILE = reflectConstant(tiledSource, 'TILE');
/** Output features per GEMV workgroup (OUTS), and most rows per pass over W (MAX_ROW_BLOCK). */
const GEMV_OUTS = reflectConstant(gemvSource, 'OUTS');
const GEMV_MAX_ROW_BLOCK = reflectConstant(gemvSource, 'MAX_ROW_BLOCK');

/**
 * Most rows the forward sends to the GEMV kernel on a hardware adapter: a decoding batch. Past it
 * the tiled kernel reuses each staged row of x across 64 outputs, where GEMV would re-walk W once
 * per 8 rows.
 */
export const LINEAR_F16_GEMV_MAX_ROWS = 64;

export const LINEAR_F16_KERNELS = ['auto', 'tiled', 'gemv'] as const;
export type LinearF16KernelChoice = (typeof LINEAR_F16_KERNELS)[number];

/**
 * The kernel the forward runs for `rows` rows under `choice`. 'auto' on a software adapter
 * (SwiftShader) is always the tiled kernel: there every invocation and barrier costs CPU time,
 * and GEMV's 256 threads per 8 outputs ran slower than the tiled kernel's 256 per 64 × 64 tile at
 * every SmolLM2 shape of the linear-f16 bench. On hardware, GEMV up to LINEAR_F16_GEMV_MAX_ROWS.
 */
export function linearF16KernelFor(
  summary: AdapterSummary,
  rows: number,
  choice: LinearF16KernelChoice = 'auto',
): 'tiled' | 'gemv' {
  checkOneOf('linearF16Forward', 'kernel', choice, LINEAR_F16_KERNELS);
  if (choice !== 'auto') return choice;
  if (summary.isFallbackAdapter || summary.architecture === 'swiftshader') return 'tiled';
  return rows <= LINEAR_F16_GEMV_MAX_ROWS ? 'gemv' : 'tiled';
}

export interface LinearF16ForwardOptions {
  /** 'auto' (default): linearF16KernelFor() — by rows and adapter. */
  kernel?: LinearF16KernelChoice;
  /** y is a column window of a wider matrix (one part of a weight split by rows). */
  yWindow?: ColumnWindow;
}

/**
 * Records y = x·Wᵀ [+ b], W the packed halves. All f32 but w; whole buffers or slices. With
 * `yWindow`, y's rows are columns yWindow.col … + outDim − 1 of a wider matrix and b is indexed in
 * its full columns.
 */
export async function encodeLinearF16Forward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; w: BufferRef; b?: BufferRef; y: BufferRef },
  shape: LinearShape,
  options: LinearF16ForwardOptions = {},
): Promise<void> {
  const op = 'linearF16Forward';
  checkLinearF16Shape(shape, op);
  const { rows, inDim, outDim } = shape;
  const kernel = linearF16KernelFor(gpu.summary, rows, options.kernel);
  const yElements = windowElements(op, 'y', rows, outDim, options.yWindow);
  const [yStride, yCol] = windowUniforms(outDim, options.yWindow);
  // A u32 word and an f32 are both 4 bytes: the f32 binding checks serve the packed weight.
  checkBindings(
    gpu,
    op,
    {
      x: [buffers.x, rows * inDim],
      w: [buffers.w, (outDim * inDim) / 2],
      b: buffers.b && [buffers.b, yCol + outDim],
    },
    ['y', buffers.y, yElements],
  );
  // Without a bias, x is bound in its place (never read: has_bias = 0).
  const bias = buffers.b ?? buffers.x;
  const hasBias = buffers.b ? 1 : 0;
  if (kernel === 'gemv') {
    const pipeline = await gpu.pipelines.get(linearF16GemvKernel, {
      ROW_BLOCK: Math.min(rows, GEMV_MAX_ROW_BLOCK),
    });
    batch.dispatch(linearF16GemvKernel, {
      pipeline,
      buffers: { x: buffers.x, w: buffers.w, bias, y: buffers.y },
      uniforms: {
        rows,
        in_dim: inDim,
        out_dim: outDim,
        has_bias: hasBias,
        y_stride: yStride,
        y_col: yCol,
      },
      workgroups: workgroupGrid(
        Math.ceil(outDim / GEMV_OUTS),
        gpu.summary.limits.maxComputeWorkgroupsPerDimension,
      ),
    });
    return;
  }
  const pipeline = await gpu.pipelines.get(linearF16Kernel, { TRANS_W: 1 });
  batch.dispatch(linearF16Kernel, {
    pipeline,
    buffers: { a: buffers.x, w: buffers.w, bias, out: buffers.y },
    uniforms: {
      m: rows,
      k: inDim,
      n: outDim,
      has_bias: hasBias,
      accumulate: 0,
      a_stride: inDim,
      a_col: 0,
      out_stride: yStride,
      out_col: yCol,
    },
    workgroups: [Math.ceil(outDim / TILE), Math.ceil(rows / TILE)],
  });
}

/**
 * Records dx = dy·W (dx += dy·W with `accumulate`: another path's share already in dx, e.g.
 * LoRA's, or an earlier part's of a weight split by rows). dy: (rows, outDim), or a column window
 * of a wider matrix with `dyWindow` (the part's columns of the logits' gradient); w: packed
 * (outDim, inDim), dx: (rows, inDim).
 */
export async function encodeLinearF16BackwardInput(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { dy: BufferRef; w: BufferRef; dx: BufferRef },
  shape: LinearShape,
  options: { accumulate?: boolean; dyWindow?: ColumnWindow } = {},
): Promise<void> {
  const op = 'linearF16BackwardInput';
  checkLinearF16Shape(shape, op);
  checkOneOf(op, 'accumulate', options.accumulate, [undefined, false, true]);
  const { rows, inDim, outDim } = shape;
  const dyElements = windowElements(op, 'dy', rows, outDim, options.dyWindow);
  const [dyStride, dyCol] = windowUniforms(outDim, options.dyWindow);
  checkBindings(gpu, op, { dy: [buffers.dy, dyElements], w: [buffers.w, (outDim * inDim) / 2] }, [
    'dx',
    buffers.dx,
    rows * inDim,
  ]);
  const pipeline = await gpu.pipelines.get(linearF16Kernel, { TRANS_W: 0 });
  batch.dispatch(linearF16Kernel, {
    pipeline,
    // No bias: dy is bound in its place (never read).
    buffers: { a: buffers.dy, w: buffers.w, bias: buffers.dy, out: buffers.dx },
    uniforms: {
      m: rows,
      k: outDim,
      n: inDim,
      has_bias: 0,
      accumulate: options.accumulate ? 1 : 0,
      a_stride: dyStride,
      a_col: dyCol,
      out_stride: inDim,
      out_col: 0,
    },
    workgroups: [Math.ceil(inDim / TILE), Math.ceil(rows / TILE)],
  });
}

/** Convenience path for linearF16Forward(): the CPU twin's checks, one sync point. */
export async function linearF16ForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  w: Uint32Array,
  b: Float32Array | undefined,
  shape: LinearShape,
  options: LinearF16ForwardOptions = {},
): Promise<Float32Array> {
  checkLinearF16ForwardInput(x, w, b, shape);
  linearF16KernelFor(gpu.summary, shape.rows, options.kernel);
  const pooled = new PooledBuffers(gpu);
  try {
    const size = shape.rows * shape.outDim;
    const buffers = {
      x: pooled.upload(x, 'linearF16 x'),
      w: pooled.upload(w, 'linearF16 w'),
      ...(b ? { b: pooled.upload(b, 'linearF16 b') } : {}),
      y: pooled.storage(size, 'linearF16 y'),
    };
    const batch = gpu.beginBatch('linearF16Forward');
    await encodeLinearF16Forward(gpu, batch, buffers, shape, options);
    batch.submit();
    return await gpu.readF32(buffers.y, size);
  } finally {
    pooled.release();
  }
}

/** Convenience path for linearF16BackwardInput(): same checks, one sync point. */
export async function linearF16BackwardInputGpu(
  gpu: GpuContext,
  dy: Float32Array,
  w: Uint32Array,
  shape: LinearShape,
  accumulate?: Float32Array,
): Promise<Float32Array> {
  checkLinearF16BackwardInput(dy, w, shape, accumulate);
  const pooled = new PooledBuffers(gpu);
  try {
    const size = shape.rows * shape.inDim;
    const buffers = {
      dy: pooled.upload(dy, 'linearF16 dy'),
      w: pooled.upload(w, 'linearF16 w'),
      dx: accumulate
        ? pooled.upload(accumulate, 'linearF16 dx')
        : pooled.storage(size, 'linearF16 dx'),
    };
    const batch = gpu.beginBatch('linearF16BackwardInput');
    await encodeLinearF16BackwardInput(gpu, batch, buffers, shape, {
      accumulate: Boolean(accumulate),
    });
    batch.submit();
    return await gpu.readF32(buffers.dx, size);
  } finally {
    pooled.release();
  }
}
