/**
 * The linear (fully connected) layer, y = x·Wᵀ + b, with W stored (outDim, inDim) as in PyTorch's
 * nn.Linear and llm.c. Built from matmul() and columnSums(); the GPU wrapper
 * (src/gpu/kernels/nn/linear.ts) makes the same three calls on the same shapes.
 *
 *   x: (rows, inDim)   W: (outDim, inDim)   b: (outDim)   y, dy: (rows, outDim)
 *   dx = dy·W: (rows, inDim)   dW = dyᵀ·x: (outDim, inDim)   db = Σ_rows dy: (outDim)
 */
import { checkInt, checkLength, checkOneOf } from '../validate';
import { type Floats } from './floats';
import { MATMUL_MAX_DIM, columnSums, matmul, type MatmulShape } from './matmul';

export interface LinearShape {
  /** Rows of x and y: B·T tokens in a transformer. */
  rows: number;
  /** Input features (PyTorch nn.Linear in_features). */
  inDim: number;
  /** Output features (PyTorch nn.Linear out_features). */
  outDim: number;
}

export interface LinearBackwardOptions<T extends Floats> {
  /** PyTorch nn.Linear bias — whether the layer has a bias, so db is computed. Default true. */
  hasBias?: boolean;
  /** (outDim, inDim): an existing dW that this layer's dW is added to (tied weights). */
  accumulateDw?: T;
}

/** Sizes only; shared with the GPU wrapper. */
export function checkLinearShape(shape: LinearShape, op: string): void {
  checkInt(op, 'rows', shape.rows, 1, MATMUL_MAX_DIM);
  checkInt(op, 'inDim', shape.inDim, 1, MATMUL_MAX_DIM);
  checkInt(op, 'outDim', shape.outDim, 1, MATMUL_MAX_DIM);
}

/** The checks linearForward() and linearForwardGpu() share. */
export function checkLinearForwardInput(
  x: Floats,
  w: Floats,
  b: Floats | undefined,
  shape: LinearShape,
): void {
  const op = 'linearForward';
  checkLinearShape(shape, op);
  checkLength(op, 'x', x, shape.rows * shape.inDim, 'rows × inDim');
  checkLength(op, 'w', w, shape.outDim * shape.inDim, 'outDim × inDim');
  if (b) checkLength(op, 'b', b, shape.outDim, 'outDim');
}

/** The checks linearBackward() and linearBackwardGpu() share. */
export function checkLinearBackwardInput(
  dy: Floats,
  x: Floats,
  w: Floats,
  shape: LinearShape,
  options: { hasBias?: boolean; accumulateDw?: Floats } = {},
): void {
  const op = 'linearBackward';
  checkLinearShape(shape, op);
  checkLength(op, 'dy', dy, shape.rows * shape.outDim, 'rows × outDim');
  checkLength(op, 'x', x, shape.rows * shape.inDim, 'rows × inDim');
  checkLength(op, 'w', w, shape.outDim * shape.inDim, 'outDim × inDim');
  checkOneOf(op, 'hasBias', options.hasBias, [undefined, false, true]);
  if (options.accumulateDw) {
    checkLength(
      op,
      'accumulateDw',
      options.accumulateDw,
      shape.outDim * shape.inDim,
      'outDim × inDim',
    );
  }
}

/** The three products of a linear layer, as matmul shapes (shared with the GPU wrapper). */
export function linearMatmulShapes(shape: LinearShape): {
  forward: MatmulShape;
  dx: MatmulShape;
  dw: MatmulShape;
} {
  const { rows, inDim, outDim } = shape;
  return {
    // y (rows, outDim) = x (rows, inDim) · Wᵀ, W stored (outDim, inDim).
    forward: { m: rows, k: inDim, n: outDim, transB: true },
    // dx (rows, inDim) = dy (rows, outDim) · W (outDim, inDim).
    dx: { m: rows, k: outDim, n: inDim },
    // dW (outDim, inDim) = dyᵀ · x, dy stored (rows, outDim).
    dw: { m: outDim, k: rows, n: inDim, transA: true },
  };
}

/** y = x·Wᵀ + b. x: (rows, inDim), w: (outDim, inDim), b: (outDim) or undefined → y: (rows, outDim). */
export function linearForward<T extends Floats>(
  x: T,
  w: T,
  b: T | undefined,
  shape: LinearShape,
): T {
  checkLinearForwardInput(x, w, b, shape);
  return matmul(x, w, linearMatmulShapes(shape).forward, b ? { bias: b } : {});
}

/** dx = dy·W, dW = dyᵀ·x (+ accumulateDw), db = Σ_rows dy (undefined when hasBias is false). */
export function linearBackward<T extends Floats>(
  dy: T,
  x: T,
  w: T,
  shape: LinearShape,
  options: LinearBackwardOptions<T> = {},
): { dx: T; dw: T; db: T | undefined } {
  checkLinearBackwardInput(dy, x, w, shape, options);
  const shapes = linearMatmulShapes(shape);
  const dx = matmul(dy, w, shapes.dx);
  const accumulate = options.accumulateDw;
  const dw = matmul(dy, x, shapes.dw, accumulate ? { accumulate } : {});
  const db = (options.hasBias ?? true) ? columnSums(dy, shape.rows, shape.outDim) : undefined;
  return { dx, dw, db };
}

/**
 * dx = dy·W only: the backward through a frozen layer (a LoRA run's base), where dW and db are
 * never needed and so never computed.
 */
export function linearInputGrad<T extends Floats>(dy: T, w: T, shape: LinearShape): T {
  const op = 'linearInputGrad';
  checkLinearShape(shape, op);
  checkLength(op, 'dy', dy, shape.rows * shape.outDim, 'rows × outDim');
  checkLength(op, 'w', w, shape.outDim * shape.inDim, 'outDim × inDim');
  return matmul(dy, w, linearMatmulShapes(shape).dx);
}
