/**
 * RMSNorm over the last dimension, as Llama, Qwen2 and Qwen3 define it (Hugging Face's
 * LlamaRMSNorm / Qwen3RMSNorm: no mean subtracted, no shift, a gain only):
 *
 *   rstd_r = 1 / √(Σ_c x[r,c]² / C + eps),   xhat = x·rstd_r,   out = xhat·w
 *
 *   x, out, dout, dx: (rows, C)   w, dw: (C)   rstd: (rows)
 *
 * rows = B·T tokens for the block norms (C = width); for Qwen3's per-head q/k norm the same op runs
 * with rows = B·T·heads and C = headDim (q laid out (B, T, NH, hs) is exactly (B·T·NH, hs)).
 * The forward returns rstd so the backward does not recompute it. Sums accumulate in JS numbers
 * (float64) for both precisions; outputs take the input's precision.
 */
import { checkInt, checkLength, checkRange } from '../validate';
import { type Floats, zerosLike } from './floats';

/** Largest rows × C: flat indices stay below 2^31 like the other nn ops. */
const MAX_ELEMENTS = 2 ** 31 - 1;

/** The checks rmsNormForward() and a GPU wrapper share. */
export function checkRmsNormInput(
  x: Floats,
  w: Floats,
  rows: number,
  cols: number,
  eps: number,
): void {
  const op = 'rmsNormForward';
  checkInt(op, 'rows', rows, 1, MAX_ELEMENTS);
  checkInt(op, 'cols', cols, 1, MAX_ELEMENTS);
  checkLength(op, 'x', x, rows * cols, 'rows × cols');
  checkLength(op, 'w', w, cols, 'cols');
  // Hugging Face: rms_norm_eps — added to the mean square before the square root; must be > 0.
  checkRange(op, 'eps', eps, 0, Infinity, { lowOpen: true });
}

/** The checks rmsNormBackward() and a GPU wrapper share. */
export function checkRmsNormBackwardInput(
  dout: Floats,
  x: Floats,
  w: Floats,
  rstd: Floats,
  rows: number,
  cols: number,
): void {
  const op = 'rmsNormBackward';
  checkInt(op, 'rows', rows, 1, MAX_ELEMENTS);
  checkInt(op, 'cols', cols, 1, MAX_ELEMENTS);
  checkLength(op, 'dout', dout, rows * cols, 'rows × cols');
  checkLength(op, 'x', x, rows * cols, 'rows × cols');
  checkLength(op, 'w', w, cols, 'cols');
  checkLength(op, 'rstd', rstd, rows, 'rows');
}

/** x: (rows, C), w: (C) → out: (rows, C), rstd: (rows). */
export function rmsNormForward<T extends Floats>(
  x: T,
  w: T,
  rows: number,
  cols: number,
  eps: number,
): { out: T; rstd: T } {
  checkRmsNormInput(x, w, rows, cols, eps);
  const out = zerosLike(x, rows * cols);
  const rstd = zerosLike(x, rows);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let squares = 0;
    for (let c = 0; c < cols; c++) squares += x[base + c]! * x[base + c]!;
    const s = 1 / Math.sqrt(squares / cols + eps);
    for (let c = 0; c < cols; c++) out[base + c] = x[base + c]! * s * w[c]!;
    rstd[r] = s;
  }
  return { out, rstd };
}

/**
 * Gradients of L through out = xhat·w, given dout = ∂L/∂out and the forward's rstd. With
 * g = dout·w (∂L/∂xhat), per row (∂rstd/∂x_c = −x_c·rstd³/C):
 *
 *   dx = rstd · (g − xhat · mean_c(g · xhat))
 *   dw = Σ_rows dout · xhat
 *
 * The layer-norm backward without the mean term (no mean is subtracted in the forward).
 */
export function rmsNormBackward<T extends Floats>(
  dout: T,
  x: T,
  w: T,
  rstd: T,
  rows: number,
  cols: number,
): { dx: T; dw: T } {
  checkRmsNormBackwardInput(dout, x, w, rstd, rows, cols);
  const dx = zerosLike(x, rows * cols);
  // Column sums in float64 whatever T is, rounded to T once at the end.
  const dwSum = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const s = rstd[r]!;
    let sumGXhat = 0;
    for (let c = 0; c < cols; c++) {
      const d = dout[base + c]!;
      const xhat = x[base + c]! * s;
      sumGXhat += d * w[c]! * xhat;
      dwSum[c]! += d * xhat;
    }
    const meanGXhat = sumGXhat / cols;
    for (let c = 0; c < cols; c++) {
      const xhat = x[base + c]! * s;
      dx[base + c] = s * (dout[base + c]! * w[c]! - xhat * meanGXhat);
    }
  }
  const dw = zerosLike(x, cols);
  dw.set(dwSum);
  return { dx, dw };
}
