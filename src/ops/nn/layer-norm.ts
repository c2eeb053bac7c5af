/**
 * LayerNorm over the last dimension, as PyTorch nn.LayerNorm(C) and GPT-2 / llm.c define it:
 *
 *   mean_r = Σ_c x[r,c] / C,   var_r = Σ_c (x[r,c] − mean_r)² / C   (biased variance)
 *   rstd_r = 1 / √(var_r + eps),   xhat = (x − mean_r)·rstd_r,   out = xhat·gamma + beta
 *
 *   x, out, dout, dx: (rows, C)   gamma, beta, dgamma, dbeta: (C)   mean, rstd: (rows)
 *
 * rows = B·T tokens in a transformer. The forward returns mean and rstd so the backward does not
 * recompute them. CPU twin of kernels/nn/layer_norm*.wgsl (src/gpu/kernels/nn/layer-norm.ts).
 * Sums accumulate in JS numbers (float64); the variance takes two passes, never E[x²] − E[x]².
 */
import { checkInt, checkLength, checkRange } from '../validate';
import { type Floats, zerosLike } from './floats';

/** PyTorch nn.LayerNorm eps default. */
export const LAYER_NORM_DEFAULT_EPS = 1e-5;

/** The checks layerNormForward() and layerNormForwardGpu() share. */
export function checkLayerNormInput(
  x: Floats,
  gamma: Floats,
  beta: Floats,
  rows: number,
  cols: number,
  eps: number,
): void {
  const op = 'layerNormForward';
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  checkLength(op, 'x', x, rows * cols, 'rows × cols');
  checkLength(op, 'gamma', gamma, cols, 'cols');
  checkLength(op, 'beta', beta, cols, 'cols');
  // PyTorch: nn.LayerNorm(eps) — added to the variance before the square root; must be > 0.
  checkRange(op, 'eps', eps, 0, Infinity, { lowOpen: true });
}

/** The checks layerNormBackward() and layerNormBackwardGpu() share. */
export function checkLayerNormBackwardInput(
  dout: Floats,
  x: Floats,
  gamma: Floats,
  mean: Floats,
  rstd: Floats,
  rows: number,
  cols: number,
): void {
  const op = 'layerNormBackward';
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  checkLength(op, 'dout', dout, rows * cols, 'rows × cols');
  checkLength(op, 'x', x, rows * cols, 'rows × cols');
  checkLength(op, 'gamma', gamma, cols, 'cols');
  checkLength(op, 'mean', mean, rows, 'rows');
  checkLength(op, 'rstd', rstd, rows, 'rows');
}

/** x: (rows, C), gamma, beta: (C) → out: (rows, C), mean, rstd: (rows). */
export function layerNormForward<T extends Floats>(
  x: T,
  gamma: T,
  beta: T,
  rows: number,
  cols: number,
  eps: number = LAYER_NORM_DEFAULT_EPS,
): { out: T; mean: T; rstd: T } {
  checkLayerNormInput(x, gamma, beta, rows, cols, eps);
  const out = zerosLike(x, rows * cols);
  const mean = zerosLike(x, rows);
  const rstd = zerosLike(x, rows);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += x[base + c]!;
    const m = sum / cols;
    let squares = 0;
    for (let c = 0; c < cols; c++) {
      const d = x[base + c]! - m;
      squares += d * d;
    }
    const s = 1 / Math.sqrt(squares / cols + eps);
    for (let c = 0; c < cols; c++) {
      out[base + c] = (x[base + c]! - m) * s * gamma[c]! + beta[c]!;
    }
    mean[r] = m;
    rstd[r] = s;
  }
  return { out, mean, rstd };
}

/**
 * Gradients of L through out = xhat·gamma + beta, given dout = ∂L/∂out and the forward's mean and
 * rstd. With g = dout·gamma (∂L/∂xhat), per row:
 *
 *   dx = rstd · (g − mean_c(g) − xhat · mean_c(g · xhat))
 *   dgamma = Σ_rows dout · xhat,   dbeta = Σ_rows dout
 *
 * (the two means come from differentiating xhat through the row's mean and variance).
 */
export function layerNormBackward<T extends Floats>(
  dout: T,
  x: T,
  gamma: T,
  mean: T,
  rstd: T,
  rows: number,
  cols: number,
): { dx: T; dgamma: T; dbeta: T } {
  checkLayerNormBackwardInput(dout, x, gamma, mean, rstd, rows, cols);
  const dx = zerosLike(x, rows * cols);
  // Column sums in float64 whatever T is, rounded to T once at the end.
  const dgammaSum = new Float64Array(cols);
  const dbetaSum = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const m = mean[r]!;
    const s = rstd[r]!;
    let sumG = 0;
    let sumGXhat = 0;
    for (let c = 0; c < cols; c++) {
      const d = dout[base + c]!;
      const xhat = (x[base + c]! - m) * s;
      const g = d * gamma[c]!;
      sumG += g;
      sumGXhat += g * xhat;
      dgammaSum[c]! += d * xhat;
      dbetaSum[c]! += d;
    }
    const meanG = sumG / cols;
    const meanGXhat = sumGXhat / cols;
    for (let c = 0; c < cols; c++) {
      const xhat = (x[base + c]! - m) * s;
      const g = dout[base + c]! * gamma[c]!;
      dx[base + c] = s * (g - meanG - xhat * meanGXhat);
    }
  }
  const dgamma = zerosLike(x, cols);
  const dbeta = zerosLike(x, cols);
  dgamma.set(dgammaSum);
  dbeta.set(dbetaSum);
  return { dx, dgamma, dbeta };
}
