/**
 * Entropy of softmax(logits / T) per row, the CPU reference for kernels/token_logprobs.wgsl run
 * without targets (HAS_TARGETS = false). Same definition and row statistics as tokenLogprobs:
 *
 *   entropy[n] = lse[n] − Σ_v p[n, v] z[n, v],  z = logits / T      verl entropy_from_logits
 *
 * 0 ≤ entropy ≤ ln V; a uniform row gives ln V.
 */
import { checkTemperedLogits, rowStats } from './token-logprobs';

const OP = 'entropyFromLogits';

export interface EntropyOptions {
  /**
   * verl: rollout temperature; TRL: temperature; OpenRLHF: --temperature. The logits are divided by
   * it before the softmax, as for the log-probs. Finite, > 0. Default 1.
   */
  temperature?: number;
}

/** Checks shared with the GPU wrapper; returns the resolved temperature. */
export function checkEntropyInput(
  logits: Float32Array,
  rows: number,
  cols: number,
  options: EntropyOptions = {},
): number {
  return checkTemperedLogits(OP, logits, rows, cols, options);
}

/** logits (N, V) → entropy (N). */
export function entropyFromLogits(
  logits: Float32Array,
  rows: number,
  cols: number,
  options: EntropyOptions = {},
): Float32Array {
  const temperature = checkEntropyInput(logits, rows, cols, options);
  const entropy = new Float32Array(rows);
  for (let n = 0; n < rows; n++) {
    const { logSum, meanShifted } = rowStats(logits, n, cols, temperature);
    entropy[n] = logSum - meanShifted;
  }
  return entropy;
}
