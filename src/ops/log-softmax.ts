/**
 * Row-wise log-softmax, the CPU reference for kernels/log_softmax.wgsl.
 *
 *   out[r, c] = z[r, c] − max_r − log Σ_c' exp(z[r, c'] − max_r)
 *
 * Subtracting the row max first keeps exp() in range for logits up to ±1e4 and beyond; the sum is
 * accumulated in float64 so this reference is more accurate than the f32 kernel it checks.
 */
import { checkFinite, checkMatrix } from './validate';

const OP = 'logSoftmax';

/** Shape and value checks shared with the GPU wrapper. */
export function checkLogSoftmaxInput(logits: Float32Array, rows: number, cols: number): void {
  checkMatrix(OP, 'logits', logits, rows, cols);
  checkFinite(OP, 'logits', logits, cols);
}

/** logits (rows × cols, row-major) → log-probabilities (rows × cols). */
export function logSoftmax(logits: Float32Array, rows: number, cols: number): Float32Array {
  checkLogSoftmaxInput(logits, rows, cols);
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let max = -Infinity;
    for (let c = 0; c < cols; c++) max = Math.max(max, logits[base + c]!);
    let sum = 0;
    for (let c = 0; c < cols; c++) sum += Math.exp(logits[base + c]! - max);
    const logZ = max + Math.log(sum);
    for (let c = 0; c < cols; c++) out[base + c] = logits[base + c]! - logZ;
  }
  return out;
}
