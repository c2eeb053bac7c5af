/**
 * Global gradient norm and clipping with PyTorch's torch.nn.utils.clip_grad_norm_ semantics; the
 * CPU reference for kernels/nn/grad_norm_partials.wgsl + kernels/nn/grad_norm_finish.wgsl.
 *
 *   norm = ‖g‖₂ over every parameter's gradient, as one flat vector
 *   coef = min(1, maxNorm / (norm + 1e-6))          (grads are then multiplied by coef)
 *
 * The GPU path keeps a 4-float stats buffer [gradNorm, clipScale, applied, step] that the AdamW
 * kernel reads; see src/gpu/kernels/nn/grad-norm.ts.
 */
import { OpInputError } from '../errors';
import type { Floats } from './floats';

/** PyTorch clip_grad_norm_ adds this to the norm before dividing (avoids 0/0 for zero grads). */
export const CLIP_EPS = 1e-6;

/** Layout of the optimizer's stats buffer (f32 elements). */
export const GRAD_STATS = { gradNorm: 0, clipScale: 1, applied: 2, step: 3, length: 4 } as const;

/**
 * ‖g‖₂ over the whole flat gradient, accumulated in float64 (so no overflow for finite f32 input).
 * NaN if any element is NaN, +Infinity if any is ±Infinity (and none is NaN), as PyTorch reports.
 */
export function gradNorm(grads: Floats): number {
  let sum = 0;
  for (let i = 0; i < grads.length; i++) sum += grads[i]! * grads[i]!;
  return Math.sqrt(sum);
}

/**
 * maxNorm must be a number (not NaN): PyTorch clip_grad_norm_ max_norm. Values ≤ 0 and +Infinity
 * mean "no clipping" here.
 */
export function checkMaxNorm(op: string, maxNorm: number): void {
  if (typeof maxNorm !== 'number' || Number.isNaN(maxNorm)) {
    throw new OpInputError(
      op,
      'maxNorm',
      `must be a number (≤ 0 or ∞ disables clipping), got ${maxNorm}`,
    );
  }
}

/** True when maxNorm asks for clipping: finite and > 0. */
export function clippingEnabled(maxNorm: number): boolean {
  return maxNorm > 0 && maxNorm < Infinity;
}

/**
 * PyTorch: coef = maxNorm / (norm + 1e-6), clamped to ≤ 1; maxNorm ≤ 0 (or Infinity) disables
 * clipping → 1. A non-finite norm gives 0, as in the GPU stats buffer: that step is skipped.
 */
export function clipScale(norm: number, maxNorm: number): number {
  checkMaxNorm('clipScale', maxNorm);
  if (!Number.isFinite(norm)) return 0;
  if (!clippingEnabled(maxNorm)) return 1;
  return Math.min(1, maxNorm / (norm + CLIP_EPS));
}
