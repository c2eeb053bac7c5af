/**
 * Softmax of scores[0..n) in place (row max subtracted first), in float64. Shared by the forward
 * (both paths) and the decode op, so that decoding reproduces the forward's rows exactly.
 */
export function softmaxInPlace(scores: Float64Array, n: number): void {
  let max = -Infinity;
  for (let u = 0; u < n; u++) max = Math.max(max, scores[u]!);
  let sum = 0;
  for (let u = 0; u < n; u++) {
    const e = Math.exp(scores[u]! - max);
    scores[u] = e;
    sum += e;
  }
  for (let u = 0; u < n; u++) scores[u] = scores[u]! / sum;
}
