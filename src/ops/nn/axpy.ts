/**
 * y ← α·x + y (BLAS's axpy): how the RL step sums its loss terms' gradients — the KL term's
 * ∂/∂logp into the policy loss's, −c_H times the entropy weights, c_V times the value loss's
 * ∂/∂V. CPU twin of kernels/nn/axpy.wgsl (src/gpu/kernels/nn/axpy.ts).
 *
 *   y, x: (L), any shape flattened; α a finite number.
 */
import { OpInputError } from '../errors';
import { checkLength } from '../validate';
import type { Floats } from './floats';

/** α must be finite (a NaN would reach every element of y). */
export function checkAxpyAlpha(alpha: number): void {
  if (!Number.isFinite(alpha)) {
    throw new OpInputError('axpy', 'alpha', `must be a finite number, got ${alpha}`);
  }
}

/** The checks axpy() and axpyGpu() share. y, x: (L), L ≥ 1; α finite. */
export function checkAxpyInput(alpha: number, x: Floats, y: Floats): void {
  checkAxpyAlpha(alpha);
  if (y.length < 1) throw new OpInputError('axpy', 'y', 'must have at least 1 element, got 0');
  checkLength('axpy', 'x', x, y.length, 'y.length');
}

/**
 * y ← α·x + y, in place: α·x + y is formed in float64 and rounded once to y's precision, as a
 * fused multiply-add would; a GPU that rounds α·x first agrees to about one ulp.
 */
export function axpy<T extends Floats>(alpha: number, x: T, y: T): void {
  checkAxpyInput(alpha, x, y);
  for (let i = 0; i < y.length; i++) y[i] = y[i]! + alpha * x[i]!;
}
