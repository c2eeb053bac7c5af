/**
 * The SwiGLU gate of Llama / Qwen MLPs: down_proj(silu(gate_proj(x)) ⊙ up_proj(x)). The three
 * projections are plain linear layers (src/ops/nn/linear.ts); this op is the elementwise middle:
 *
 *   σ(g) = 1 / (1 + e^(−g)),   silu(g) = g·σ(g),   h = silu(g) ⊙ u
 *   silu′(g) = σ(g)·(1 + g·(1 − σ(g)))
 *   dg = dh ⊙ u ⊙ silu′(g),   du = dh ⊙ silu(g)
 *
 *   g, u, h, dh, dg, du: (rows, F), any shape flattened (g and u the same length).
 *
 * Arithmetic runs in JS numbers (float64); outputs take the precision of g.
 */
import { OpInputError } from '../errors';
import { checkLength } from '../validate';
import { type Floats, zerosLike } from './floats';

/** The checks swigluForward() and a GPU wrapper share. g, u: (L), L ≥ 1. */
export function checkSwigluInput(g: Floats, u: Floats): void {
  const op = 'swigluForward';
  if (g.length < 1) throw new OpInputError(op, 'g', 'must have at least 1 element, got 0');
  checkLength(op, 'u', u, g.length, 'g.length');
}

/** The checks swigluBackward() and a GPU wrapper share. dh, g, u: (L), L ≥ 1. */
export function checkSwigluBackwardInput(dh: Floats, g: Floats, u: Floats): void {
  const op = 'swigluBackward';
  if (g.length < 1) throw new OpInputError(op, 'g', 'must have at least 1 element, got 0');
  checkLength(op, 'u', u, g.length, 'g.length');
  checkLength(op, 'dh', dh, g.length, 'g.length');
}

/** σ(v) without overflow for large |v| (exp of a non-positive number only). */
function sigmoid(v: number): number {
  if (v >= 0) return 1 / (1 + Math.exp(-v));
  const e = Math.exp(v);
  return e / (1 + e);
}

/** h = silu(g) ⊙ u, elementwise. */
export function swigluForward<T extends Floats>(g: T, u: T): T {
  checkSwigluInput(g, u);
  const h = zerosLike(g, g.length);
  for (let i = 0; i < g.length; i++) {
    const v = g[i]!;
    h[i] = v * sigmoid(v) * u[i]!;
  }
  return h;
}

/** dg, du from dh = ∂L/∂h and the forward's inputs g and u. */
export function swigluBackward<T extends Floats>(dh: T, g: T, u: T): { dg: T; du: T } {
  checkSwigluBackwardInput(dh, g, u);
  const dg = zerosLike(g, g.length);
  const du = zerosLike(g, g.length);
  for (let i = 0; i < g.length; i++) {
    const v = g[i]!;
    const s = sigmoid(v);
    dg[i] = dh[i]! * u[i]! * s * (1 + v * (1 - s));
    du[i] = dh[i]! * v * s;
  }
  return { dg, du };
}
