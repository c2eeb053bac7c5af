/**
 * Moving between sequence-level (B) and token-level (B, T) tensors; CPU references for
 * kernels/broadcast_sum_tokens.wgsl and kernels/broadcast_tokens.wgsl.
 *
 *   sumOverTokens:     score_b = Σ_t x[b, t]           (verl: token_level_rewards.sum(dim=-1))
 *   broadcastToTokens: out[b, t] = value_b · m[b, t]   (verl: scores.unsqueeze(-1) * response_mask)
 *
 * The sum is unmasked, as in verl: token-level rewards are already 0 at padding.
 */
import { checkBinary, checkFinite, checkLength, checkMatrix } from './validate';

/**
 * Checks shared by sumOverTokens() and its GPU wrapper; finiteness is scanned unless `scanFinite`
 * is false (the GPU path, whose kernel reports non-finite values with the same error class).
 */
export function checkSumOverTokensInput(
  tokens: Float32Array,
  rows: number,
  cols: number,
  scanFinite = true,
): void {
  checkMatrix('sumOverTokens', 'tokens', tokens, rows, cols);
  if (scanFinite) checkFinite('sumOverTokens', 'tokens', tokens, cols);
}

/** tokens: (rows, cols) → (rows) row sums, accumulated in float64. */
export function sumOverTokens(tokens: Float32Array, rows: number, cols: number): Float32Array {
  checkSumOverTokensInput(tokens, rows, cols);
  const out = new Float32Array(rows);
  for (let b = 0; b < rows; b++) {
    let sum = 0;
    for (let t = 0; t < cols; t++) sum += tokens[b * cols + t]!;
    out[b] = sum;
  }
  return out;
}

/** Checks shared by broadcastToTokens() and its GPU wrapper (see checkSumOverTokensInput). */
export function checkBroadcastInput(
  seqValues: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  scanFinite = true,
): void {
  checkMatrix('broadcastToTokens', 'mask', mask, rows, cols);
  checkLength('broadcastToTokens', 'seqValues', seqValues, rows, 'B');
  checkBinary('broadcastToTokens', 'mask', mask, cols);
  if (scanFinite) checkFinite('broadcastToTokens', 'seqValues', seqValues);
}

/** seqValues: (rows), mask: (rows, cols) 0/1 → (rows, cols) value · mask. */
export function broadcastToTokens(
  seqValues: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
): Float32Array {
  checkBroadcastInput(seqValues, mask, rows, cols);
  const out = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    const value = seqValues[b]!;
    // A select, not value·m: −3·0 would store −0 at padding.
    for (let t = 0; t < cols; t++) out[b * cols + t] = mask[b * cols + t] === 1 ? value : 0;
  }
  return out;
}
