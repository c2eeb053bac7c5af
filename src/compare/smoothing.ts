/**
 * Curve smoothing for the compare charts. Both smoothers are causal: the smoothed value at update
 * i uses only values 0 … i, so a curve does not change shape as the run grows (TensorBoard's
 * centred smoothing would redraw the tail on every new point). Non-finite values are gaps: they
 * come out as NaN, are skipped, and do not reset the smoother.
 */

export type Smoothing =
  | { kind: 'none' }
  /** Debiased EMA with weight w ∈ [0, 1) (TensorBoard's slider; 0 = raw). */
  | { kind: 'ema'; weight: number }
  /** Trailing mean of the last `window` finite values (integer ≥ 1). */
  | { kind: 'moving-average'; window: number };

export const SMOOTHING_KINDS = ['none', 'ema', 'moving-average'] as const;

/** Largest moving-average window accepted (a window longer than any run is pointless). */
export const MAX_WINDOW = 1_000_000;

/** Smooths `values` as `smoothing` says; returns a new array of the same length. */
export function smooth(values: readonly number[], smoothing: Smoothing): number[] {
  switch (smoothing.kind) {
    case 'none':
      return values.map((v) => (Number.isFinite(v) ? v : NaN));
    case 'ema':
      return debiasedEma(values, smoothing.weight);
    case 'moving-average':
      return movingAverage(values, smoothing.window);
  }
}

/**
 * Exponential moving average with TensorBoard's debiasing: s_t = m_t / (1 − w^t), where
 * m_t = w·m_{t−1} + (1 − w)·y_t, m_0 = 0 and t counts the finite values so far. Without the
 * division the first points would be pulled toward 0. Non-finite values pass through as NaN.
 * weight in [0, 1): 0 returns the values unchanged.
 */
export function debiasedEma(values: readonly number[], weight: number): number[] {
  if (!(weight >= 0 && weight < 1)) throw new RangeError(`weight must be in [0, 1), got ${weight}`);
  const out = new Array<number>(values.length);
  let m = 0;
  let t = 0;
  for (let i = 0; i < values.length; i++) {
    const y = values[i]!;
    if (!Number.isFinite(y)) {
      out[i] = NaN;
      continue;
    }
    t += 1;
    m = weight * m + (1 - weight) * y;
    out[i] = m / (1 - weight ** t);
  }
  return out;
}

/**
 * Trailing moving average: at a finite value, the mean of it and the up to `window − 1` finite
 * values before it (fewer at the start, so the first point is the value itself). The running sum
 * is recomputed from the window once per `window` points, so rounding error cannot build up over
 * a long run while the cost stays O(n).
 */
export function movingAverage(values: readonly number[], window: number): number[] {
  if (!Number.isInteger(window) || window < 1 || window > MAX_WINDOW) {
    throw new RangeError(`window must be an integer in [1, ${MAX_WINDOW}], got ${window}`);
  }
  const out = new Array<number>(values.length);
  // The last `window` finite values, oldest overwritten first. Its size is the window, never the
  // input's length, so the rounding of earlier points does not depend on how long the run is.
  const ring: number[] = [];
  let count = 0; // finite values seen
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    const y = values[i]!;
    if (!Number.isFinite(y)) {
      out[i] = NaN;
      continue;
    }
    const slot = count % window;
    if (count >= window) sum -= ring[slot]!;
    ring[slot] = y;
    sum += y;
    count += 1;
    const n = Math.min(count, window);
    if (count % window === 0) {
      sum = 0;
      for (let k = 0; k < n; k++) sum += ring[k]!;
    }
    out[i] = sum / n;
  }
  return out;
}
