/**
 * The linear layer on the GPU, y = x·Wᵀ + b with W: (outDim, inDim); CPU twin:
 * src/ops/nn/linear.ts. No kernel of its own: the same matmul / column-sum products as the CPU
 * twin, on the shapes linearMatmulShapes() gives.
 *   forward:  1 matmul dispatch.
 *   backward: up to 3 dispatches in one batch — dx = dy·W (skipped when no dx is bound, e.g. the
 *             first layer), dW = dyᵀ·x, db = Σ_rows dy (when db is bound).
 */
import {
  type LinearBackwardOptions,
  type LinearShape,
  checkLinearBackwardInput,
  checkLinearForwardInput,
  checkLinearShape,
  linearMatmulShapes,
} from '../../../ops/nn/linear';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { PooledBuffers } from '../run-convenience';
import { type ColumnWindow, encodeColumnSums, encodeMatmul } from './matmul';

/**
 * Records y = x·Wᵀ [+ b]. x: (rows, inDim), w: (outDim, inDim), b: (outDim), y: (rows, outDim),
 * or y a column window of a wider matrix (one part of a weight split by rows; b then indexed in
 * y's full columns).
 */
export async function encodeLinearForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; w: BufferRef; b?: BufferRef; y: BufferRef },
  shape: LinearShape,
  options: { yWindow?: ColumnWindow } = {},
): Promise<void> {
  checkLinearShape(shape, 'linearForward');
  await encodeMatmul(
    gpu,
    batch,
    { a: buffers.x, b: buffers.w, ...(buffers.b ? { bias: buffers.b } : {}), out: buffers.y },
    linearMatmulShapes(shape).forward,
    options.yWindow ? { outWindow: options.yWindow } : {},
  );
}

export interface LinearBackwardEncodeOptions {
  /** dw += dyᵀ·x instead of dw = dyᵀ·x (tied weights, gradient accumulation). */
  accumulateDw?: boolean;
  /** dx += dy·W instead of dx = dy·W (a residual stream whose gradient is already in dx). */
  accumulateDx?: boolean;
}

/**
 * Records the backward pass. dy: (rows, outDim), x: (rows, inDim), w: (outDim, inDim) →
 * dx: (rows, inDim) if bound, dw: (outDim, inDim), db: (outDim) if bound.
 */
export async function encodeLinearBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    dy: BufferRef;
    x: BufferRef;
    w: BufferRef;
    dx?: BufferRef;
    dw: BufferRef;
    db?: BufferRef;
  },
  shape: LinearShape,
  options: LinearBackwardEncodeOptions = {},
): Promise<void> {
  checkLinearShape(shape, 'linearBackward');
  const shapes = linearMatmulShapes(shape);
  if (buffers.dx) {
    await encodeMatmul(gpu, batch, { a: buffers.dy, b: buffers.w, out: buffers.dx }, shapes.dx, {
      accumulate: options.accumulateDx ?? false,
    });
  }
  await encodeMatmul(gpu, batch, { a: buffers.dy, b: buffers.x, out: buffers.dw }, shapes.dw, {
    accumulate: options.accumulateDw ?? false,
  });
  if (buffers.db) {
    await encodeColumnSums(
      gpu,
      batch,
      { x: buffers.dy, out: buffers.db },
      shape.rows,
      shape.outDim,
    );
  }
}

/** Convenience path for linearForward(): same checks, one sync point. */
export async function linearForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  w: Float32Array,
  b: Float32Array | undefined,
  shape: LinearShape,
): Promise<Float32Array> {
  checkLinearForwardInput(x, w, b, shape);
  const pooled = new PooledBuffers(gpu);
  try {
    const size = shape.rows * shape.outDim;
    const buffers = {
      x: pooled.upload(x, 'linear x'),
      w: pooled.upload(w, 'linear w'),
      ...(b ? { b: pooled.upload(b, 'linear b') } : {}),
      y: pooled.storage(size, 'linear y'),
    };
    const batch = gpu.beginBatch('linearForward');
    await encodeLinearForward(gpu, batch, buffers, shape);
    batch.submit();
    return await gpu.readF32(buffers.y, size);
  } finally {
    pooled.release();
  }
}

/** Convenience path for linearBackward(): same checks and options, one sync point. */
export async function linearBackwardGpu(
  gpu: GpuContext,
  dy: Float32Array,
  x: Float32Array,
  w: Float32Array,
  shape: LinearShape,
  options: LinearBackwardOptions<Float32Array> = {},
): Promise<{ dx: Float32Array; dw: Float32Array; db: Float32Array | undefined }> {
  checkLinearBackwardInput(dy, x, w, shape, options);
  const { rows, inDim, outDim } = shape;
  const hasBias = options.hasBias ?? true;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dy: pooled.upload(dy, 'linear dy'),
      x: pooled.upload(x, 'linear x'),
      w: pooled.upload(w, 'linear w'),
      dx: pooled.storage(rows * inDim, 'linear dx'),
      dw: options.accumulateDw
        ? pooled.upload(options.accumulateDw, 'linear dw')
        : pooled.storage(outDim * inDim, 'linear dw'),
      ...(hasBias ? { db: pooled.storage(outDim, 'linear db') } : {}),
    };
    const batch = gpu.beginBatch('linearBackward');
    await encodeLinearBackward(gpu, batch, buffers, shape, {
      accumulateDw: Boolean(options.accumulateDw),
    });
    batch.submit();
    // The three reads wait on the same submission: one sync point.
    const [dx, dw, db] = await Promise.all([
      gpu.readF32(buffers.dx, rows * inDim),
      gpu.readF32(buffers.dw, outDim * inDim),
      buffers.db ? gpu.readF32(buffers.db, outDim) : undefined,
    ]);
    return { dx, dw, db };
  } finally {
    pooled.release();
  }
}
