/**
 * The logistic function and its log, evaluated so that neither overflows nor loses the tail: the
 * pairwise losses (DPO, Bradley–Terry) are −log σ(x) = softplus(−x) of a margin x.
 */

/** log(1 + eˣ) without overflow for large x or loss of the tail for very negative x. */
export function softplus(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

/** 1 / (1 + e^−x), evaluated on the side where exp() cannot overflow. */
export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}
