/**
 * Elementwise activations and their derivatives. CPU twin of kernels/nn/activation.wgsl and
 * kernels/nn/activation_backward.wgsl (src/gpu/kernels/nn/activation.ts).
 *
 *   'gelu': the tanh approximation GPT-2 uses (PyTorch nn.GELU(approximate='tanh')):
 *           gelu(x) = 0.5·x·(1 + tanh(u)),  u = √(2/π)·(x + 0.044715·x³)
 *           gelu'(x) = 0.5·(1 + tanh(u)) + 0.5·x·(1 − tanh²(u))·√(2/π)·(1 + 3·0.044715·x²)
 *   'tanh': tanh(x), derivative 1 − tanh²(x)
 *   'relu': max(0, x), derivative 1 for x > 0 else 0 (0 at x = 0, as PyTorch)
 *
 *   x, y, dy, dx: (L), any shape flattened. The backward takes the forward's INPUT x.
 */
import { OpInputError } from '../errors';
import { checkLength, checkOneOf } from '../validate';
import { type Floats, zerosLike } from './floats';

export const ACTIVATIONS = ['gelu', 'tanh', 'relu'] as const;
export type Activation = (typeof ACTIVATIONS)[number];

/** √(2/π), the GELU tanh-approximation's scale. */
export const GELU_SCALE = Math.sqrt(2 / Math.PI);
/** The cubic coefficient of the GELU tanh approximation. */
export const GELU_CUBIC = 0.044715;

/** The checks activationForward() and activationForwardGpu() share. x: (L), L ≥ 1. */
export function checkActivationInput(x: Floats, kind: Activation): void {
  const op = 'activationForward';
  checkOneOf(op, 'kind', kind, ACTIVATIONS);
  if (x.length < 1) throw new OpInputError(op, 'x', 'must have at least 1 element, got 0');
}

/** The checks activationBackward() and activationBackwardGpu() share. dy, x: (L), L ≥ 1. */
export function checkActivationBackwardInput(dy: Floats, x: Floats, kind: Activation): void {
  const op = 'activationBackward';
  checkOneOf(op, 'kind', kind, ACTIVATIONS);
  if (x.length < 1) throw new OpInputError(op, 'x', 'must have at least 1 element, got 0');
  checkLength(op, 'dy', dy, x.length, 'x.length');
}

function activate(v: number, kind: Activation): number {
  if (kind === 'gelu') {
    return 0.5 * v * (1 + Math.tanh(GELU_SCALE * (v + GELU_CUBIC * v * v * v)));
  }
  if (kind === 'tanh') return Math.tanh(v);
  return v > 0 ? v : 0;
}

function derivative(v: number, kind: Activation): number {
  if (kind === 'gelu') {
    const t = Math.tanh(GELU_SCALE * (v + GELU_CUBIC * v * v * v));
    const du = GELU_SCALE * (1 + 3 * GELU_CUBIC * v * v);
    return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * du;
  }
  if (kind === 'tanh') {
    const t = Math.tanh(v);
    return 1 - t * t;
  }
  return v > 0 ? 1 : 0;
}

/** y = f(x), elementwise. */
export function activationForward<T extends Floats>(x: T, kind: Activation): T {
  checkActivationInput(x, kind);
  const y = zerosLike(x, x.length);
  for (let i = 0; i < x.length; i++) y[i] = activate(x[i]!, kind);
  return y;
}

/** dx = dy · f′(x), elementwise, with x the forward's input. */
export function activationBackward<T extends Floats>(dy: T, x: T, kind: Activation): T {
  checkActivationBackwardInput(dy, x, kind);
  const dx = zerosLike(x, x.length);
  for (let i = 0; i < x.length; i++) dx[i] = dy[i]! * derivative(x[i]!, kind);
  return dx;
}
