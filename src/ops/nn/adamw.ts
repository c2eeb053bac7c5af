/**
 * One AdamW step with torch.optim.AdamW semantics (decoupled weight decay, bias-corrected moments),
 * the CPU reference for kernels/nn/adamw.wgsl. Per element, with t the step (≥ 1) and
 * g = grad · gradScale (the clip coefficient from clipScale()):
 *
 *   p ← p − lr·wd·p
 *   m ← β1·m + (1 − β1)·g
 *   v ← β2·v + (1 − β2)·g²
 *   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps)
 */
import { OpInputError } from '../errors';
import { checkInt, checkRange } from '../validate';
import type { Floats } from './floats';

export interface AdamWOptions {
  /** PyTorch AdamW lr: the learning rate, > 0. */
  lr: number;
  /** PyTorch AdamW betas[0]: decay of the first moment, in [0, 1). Default 0.9. */
  beta1?: number;
  /** PyTorch AdamW betas[1]: decay of the second moment, in [0, 1). Default 0.999. */
  beta2?: number;
  /** PyTorch AdamW eps: added to the denominator, > 0. Default 1e-8. */
  eps?: number;
  /**
   * PyTorch AdamW weight_decay: decoupled decay, ≥ 0. Default 0.01 (PyTorch AdamW's default); the
   * caller passes 0 for biases and LayerNorm parameters.
   */
  weightDecay?: number;
}

const OP = 'adamw';

/** Fills in the defaults and checks every field's range (OpInputError names field and range). */
export function checkAdamWOptions(options: AdamWOptions): Required<AdamWOptions> {
  const resolved = {
    lr: options.lr,
    beta1: options.beta1 ?? 0.9,
    beta2: options.beta2 ?? 0.999,
    eps: options.eps ?? 1e-8,
    weightDecay: options.weightDecay ?? 0.01,
  };
  checkRange(OP, 'lr', resolved.lr, 0, Infinity, { lowOpen: true });
  checkRange(OP, 'beta1', resolved.beta1, 0, 1, { highOpen: true });
  checkRange(OP, 'beta2', resolved.beta2, 0, 1, { highOpen: true });
  checkRange(OP, 'eps', resolved.eps, 0, Infinity, { lowOpen: true });
  checkRange(OP, 'weightDecay', resolved.weightDecay, 0, Infinity);
  return resolved;
}

/** Length, step and gradScale checks of adamwStep; shared with the GPU convenience path. */
export function checkAdamWInput(
  params: Floats,
  grads: Floats,
  m: Floats,
  v: Floats,
  step: number,
  gradScale: number,
): void {
  if (params.length < 1) throw new OpInputError(OP, 'params', 'must not be empty');
  for (const [field, data] of [
    ['grads', grads],
    ['m', m],
    ['v', v],
  ] as const) {
    if (data.length !== params.length) {
      throw new OpInputError(
        OP,
        field,
        `must have params.length = ${params.length} elements, got ${data.length}`,
      );
    }
  }
  // The GPU keeps the step as an f32 count: integers are exact up to 2^24.
  checkInt(OP, 'step', step, 1, 2 ** 24);
  checkRange(OP, 'gradScale', gradScale, 0, Infinity);
}

/**
 * In place over params/grads/m/v (same length): with t = stats-style step (≥ 1) and
 * g = grad·gradScale, one AdamW update (see the file comment). grads is only read.
 */
export function adamwStep<T extends Floats>(
  params: T,
  grads: T,
  m: T,
  v: T,
  step: number,
  options: AdamWOptions,
  gradScale = 1,
): void {
  const { lr, beta1, beta2, eps, weightDecay } = checkAdamWOptions(options);
  checkAdamWInput(params, grads, m, v, step, gradScale);
  const stepSize = lr / (1 - beta1 ** step);
  const sqrtCorrection2 = Math.sqrt(1 - beta2 ** step);
  const decay = 1 - lr * weightDecay;
  for (let i = 0; i < params.length; i++) {
    const g = grads[i]! * gradScale;
    m[i] = beta1 * m[i]! + (1 - beta1) * g;
    v[i] = beta2 * v[i]! + (1 - beta2) * g * g;
    // Read back the stored moments: in Float32Array they are rounded as on the GPU.
    const mi = m[i]!;
    const vi = v[i]!;
    const p = params[i]! * decay;
    params[i] = p - (stepSize * mi) / (Math.sqrt(vi) / sqrtCorrection2 + eps);
  }
}
