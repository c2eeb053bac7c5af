/**
 * Masked whitening, the CPU reference for kernels/whiten_stats.wgsl + kernels/whiten_apply.wgsl.
 *
 *   n = Σ m,  mean = Σ m·x / n,  var = Σ m·(x − mean)² / n   (× n/(n−1) when unbiased)
 *   out = m · ((x − mean) · rsqrt(var + ε))          epsilonMode 'add'   (verl, TRL masked_whiten)
 *   out = m · ((x − mean) · rsqrt(max(var, ε)))      epsilonMode 'clamp' (OpenRLHF)
 *
 * Sums in float64, the variance in two passes (never E[x²] − E[x]²). Frameworks whiten advantages
 * over every response token of the batch at once; the trainer composes this op after GAE etc.
 *
 * Degenerate masks never produce NaN: Σm = 0 gives all zeros and `emptyMask: true`; Σm = 1 with
 * `unbiased` has no defined variance (verl's masked_var raises there) — we report variance 0, so
 * the single position whitens to 0 (to its own value with shiftMean = false).
 */
import { type Flavor, type FlavorOption, resolveFlavor } from './flavor';
import { checkBinary, checkFinite, checkMatrix, checkOneOf, checkRange } from './validate';

const OP = 'whiten';

export interface WhitenSettings {
  /**
   * verl/TRL: masked_var(unbiased=True) multiplies by n/(n−1) (Bessel); OpenRLHF divides by n.
   * Default true (verl, TRL), false (OpenRLHF).
   */
  unbiased: boolean;
  /**
   * verl/TRL masked_whiten: 'add' — (x − mean)·rsqrt(var + ε). OpenRLHF: 'clamp' —
   * (x − mean)·var.clamp(min=ε).rsqrt(). Default 'add' (verl, TRL), 'clamp' (OpenRLHF).
   */
  epsilonMode: 'add' | 'clamp';
  /** ε of epsilonMode; all three frameworks hard-code 1e-8. Must be > 0 (finite). Default 1e-8. */
  epsilon: number;
  /** verl/TRL masked_whiten shift_mean: false adds the mean back after scaling. Default true. */
  shiftMean: boolean;
}

export type WhitenOptions = Partial<WhitenSettings> & FlavorOption;

/**
 * TRL's masked_whiten/masked_var (trl PPO's advantage whitening) are the same as verl's
 * (unbiased = True, rsqrt(var + 1e-8)), so 'trl' shares verl's defaults.
 */
export const WHITEN_DEFAULTS: Record<Flavor, WhitenSettings> = {
  verl: { unbiased: true, epsilonMode: 'add', epsilon: 1e-8, shiftMean: true },
  trl: { unbiased: true, epsilonMode: 'add', epsilon: 1e-8, shiftMean: true },
  openrlhf: { unbiased: false, epsilonMode: 'clamp', epsilon: 1e-8, shiftMean: true },
};

export interface WhitenStats {
  /** Σ m: number of unmasked positions. */
  count: number;
  /** Masked mean (0 when the mask is empty). */
  mean: number;
  /** The variance used for scaling (after Bessel's correction when unbiased; 0 when undefined). */
  variance: number;
  /** True when Σ m = 0; the output is then all zeros. */
  emptyMask: boolean;
}

export interface WhitenResult {
  /** (rows, cols) whitened values, 0 at masked positions. */
  output: Float32Array;
  stats: WhitenStats;
}

/** Merges flavor defaults with explicit options and checks their ranges. */
export function resolveWhitenOptions(
  op: string,
  options: WhitenOptions = {},
): WhitenSettings & { flavor: Flavor } {
  const s = resolveFlavor(op, WHITEN_DEFAULTS, options);
  checkOneOf(op, 'unbiased', s.unbiased, [true, false]);
  checkOneOf(op, 'epsilonMode', s.epsilonMode, ['add', 'clamp']);
  checkRange(op, 'epsilon', s.epsilon, 0, Infinity, { min: true });
  checkOneOf(op, 'shiftMean', s.shiftMean, [true, false]);
  return s;
}

/**
 * Checks shared by whiten() and whitenGpu(): shapes, options, mask values; and finiteness of x
 * unless `scanFinite` is false (the GPU path, whose kernel reports non-finite values itself with
 * the same OpInputError class). Returns the resolved options.
 */
export function checkWhitenInput(
  x: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: WhitenOptions = {},
  scanFinite = true,
): WhitenSettings & { flavor: Flavor } {
  const settings = resolveWhitenOptions(OP, options);
  checkMatrix(OP, 'x', x, rows, cols);
  checkMatrix(OP, 'mask', mask, rows, cols);
  checkBinary(OP, 'mask', mask, cols);
  if (scanFinite) checkFinite(OP, 'x', x, cols);
  return settings;
}

export interface Moments {
  /** Σ m. */
  count: number;
  /** Σ m·x / Σ m, 0 when Σ m = 0. */
  mean: number;
  /** Σ m·(x − mean)². */
  m2: number;
}

/**
 * Masked count, mean and sum of squared deviations (mask undefined = all ones), float64, two
 * passes. A constant input gets mean = that value and m2 = 0 exactly: f64 sums of equal f32 values
 * are exact anyway, and stating the rule lets the f32 kernel (which tests min = max) agree exactly.
 */
export function maskedMoments(x: Float32Array, mask?: Float32Array): Moments {
  let count = 0;
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < x.length; i++) {
    if (mask && mask[i] === 0) continue;
    const v = x[i]!;
    count += 1;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (count === 0) return { count, mean: 0, m2: 0 };
  if (min === max) return { count, mean: min, m2: 0 };
  const mean = sum / count;
  let m2 = 0;
  for (let i = 0; i < x.length; i++) {
    if (mask && mask[i] === 0) continue;
    const d = x[i]! - mean;
    m2 += d * d;
  }
  return { count, mean, m2 };
}

/** m2 / n (population) or m2 / (n − 1) (unbiased); 0 where that is undefined (n = 0, or n = 1 unbiased). */
export function varianceFromMoments(count: number, m2: number, unbiased: boolean): number {
  if (count === 0 || (unbiased && count === 1)) return 0;
  return m2 / (unbiased ? count - 1 : count);
}

/** 1/√(var + ε) ('add') or 1/√max(var, ε) ('clamp'). */
export function whitenScale(variance: number, settings: WhitenSettings): number {
  const v =
    settings.epsilonMode === 'add'
      ? variance + settings.epsilon
      : Math.max(variance, settings.epsilon);
  return 1 / Math.sqrt(v);
}

/** x, mask: (rows, cols) row-major → whitened (rows, cols), 0 where mask = 0. */
export function whiten(
  x: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: WhitenOptions = {},
): WhitenResult {
  const settings = checkWhitenInput(x, mask, rows, cols, options);
  const { count, mean, m2 } = maskedMoments(x, mask);
  const variance = varianceFromMoments(count, m2, settings.unbiased);
  const scale = whitenScale(variance, settings);
  const shift = settings.shiftMean ? 0 : mean;
  const output = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) {
    if (mask[i] === 1) output[i] = (x[i]! - mean) * scale + shift;
  }
  return { output, stats: { count, mean, variance, emptyMask: count === 0 } };
}
