/**
 * The linear layer on a frozen weight stored as f16 pairs, as a brought model keeps its weights on
 * the GPU: y = x·Wᵀ (+ b), and the input gradient dx = dy·W that LoRA's backward needs through a
 * frozen base layer (a frozen weight has no dW). CPU twin of kernels/nn/linear_f16.wgsl (tiled,
 * both products) and kernels/nn/linear_f16_gemv.wgsl (few rows, forward).
 *
 *   x: (rows, inDim) f32   W: (outDim, inDim) as (outDim·inDim / 2) u32, two halves a word, the
 *   lower index in the low 16 bits (src/ops/nn/unpack-f16.ts)   b: (outDim) f32
 *   y, dy: (rows, outDim)   dx: (rows, inDim)
 *
 * inDim must be even: then every row of W starts on a word, so a kernel reads a row as whole u32
 * pairs and never splits a word between two rows. Every real model's widths are even.
 *
 * The weight is widened exactly (every f16 is an f32) and the products are linear.ts's, so sums
 * run in float64 and are rounded once.
 */
import { OpInputError } from '../errors';
import { checkLength } from '../validate';
import { checkLinearShape, linearForward, linearMatmulShapes, type LinearShape } from './linear';
import { matmul } from './matmul';
import { unpackF16 } from './unpack-f16';

/** Sizes only, shared with the GPU wrapper: linear.ts's ranges, and an even inDim. */
export function checkLinearF16Shape(shape: LinearShape, op: string): void {
  checkLinearShape(shape, op);
  if (shape.inDim % 2 !== 0) {
    throw new OpInputError(
      op,
      'inDim',
      `must be even for f16 weights (each row of W is read as whole u32 pairs of halves), got ${shape.inDim}`,
    );
  }
}

/** The packed weight: a Uint32Array of outDim·inDim / 2 words. */
function checkPackedWeight(op: string, w: Uint32Array, shape: LinearShape): void {
  if (!(w instanceof Uint32Array)) {
    throw new OpInputError(op, 'w', 'must be a Uint32Array of f16 pairs (packF16)');
  }
  checkLength(op, 'w', w, (shape.outDim * shape.inDim) / 2, 'outDim × inDim / 2 words');
}

/** The checks linearF16Forward() and its GPU wrapper share. */
export function checkLinearF16ForwardInput(
  x: Float32Array,
  w: Uint32Array,
  b: Float32Array | undefined,
  shape: LinearShape,
): void {
  const op = 'linearF16Forward';
  checkLinearF16Shape(shape, op);
  checkLength(op, 'x', x, shape.rows * shape.inDim, 'rows × inDim');
  checkPackedWeight(op, w, shape);
  if (b) checkLength(op, 'b', b, shape.outDim, 'outDim');
}

/** The checks linearF16BackwardInput() and its GPU wrapper share. */
export function checkLinearF16BackwardInput(
  dy: Float32Array,
  w: Uint32Array,
  shape: LinearShape,
  accumulate?: Float32Array,
): void {
  const op = 'linearF16BackwardInput';
  checkLinearF16Shape(shape, op);
  checkLength(op, 'dy', dy, shape.rows * shape.outDim, 'rows × outDim');
  checkPackedWeight(op, w, shape);
  if (accumulate)
    checkLength(op, 'accumulate', accumulate, shape.rows * shape.inDim, 'rows × inDim');
}

/** y (rows, outDim) = x·Wᵀ (+ b), W the packed (outDim, inDim) halves. */
export function linearF16Forward(
  x: Float32Array,
  w: Uint32Array,
  b: Float32Array | undefined,
  shape: LinearShape,
): Float32Array {
  checkLinearF16ForwardInput(x, w, b, shape);
  return linearForward(x, unpackF16(w, shape.outDim * shape.inDim), b, shape);
}

/** dx (rows, inDim) = dy·W (+ accumulate, e.g. the LoRA path's share of dx). */
export function linearF16BackwardInput(
  dy: Float32Array,
  w: Uint32Array,
  shape: LinearShape,
  accumulate?: Float32Array,
): Float32Array {
  checkLinearF16BackwardInput(dy, w, shape, accumulate);
  const wide = unpackF16(w, shape.outDim * shape.inDim);
  return matmul(dy, wide, linearMatmulShapes(shape).dx, accumulate ? { accumulate } : {});
}
