/**
 * Finite-difference gradient checks in float64 for the CPU twins in src/ops/nn and src/models.
 *
 * The scalar checked is L = Σ_i w_i · f(x)_i with fixed random weights w, so its gradient is the
 * backward pass fed with dout = w. Central differences, (L(x + h) − L(x − h)) / 2h, have O(h²)
 * error; with h = 1e-5 in float64 they agree with a correct analytic gradient to ~1e-8 relative.
 */
import { seededRandom } from '../../src/util/random';

/** Fixed weights for the probe L = Σ w·f(x): uniform in [−1, 1), seeded. */
export function probeWeights(length: number, seed: number): Float64Array {
  const next = seededRandom(seed);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = next() * 2 - 1;
  return out;
}

/** Σ_i w_i · y_i in float64. */
export function dot(w: ArrayLike<number>, y: ArrayLike<number>): number {
  if (w.length !== y.length) throw new Error(`dot: lengths ${w.length} and ${y.length} differ`);
  let sum = 0;
  for (let i = 0; i < w.length; i++) sum += w[i]! * y[i]!;
  return sum;
}

/** Uniform float64 values in [−scale, scale), seeded. */
export function randomF64(length: number, scale: number, seed: number): Float64Array {
  const next = seededRandom(seed);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = (next() * 2 - 1) * scale;
  return out;
}

export interface GradCheckResult {
  /** Largest |analytic − numeric| / max(1e-6 … see below) over the checked entries. */
  maxRelError: number;
  /** Where it happened, for the failure message. */
  worst: { index: number; analytic: number; numeric: number };
  checked: number;
}

/**
 * Compares `analytic` (∂L/∂x, same length as x) with central differences of `loss` at up to
 * `maxEntries` entries of x (all when x is small; otherwise a seeded sample). `loss` must read x
 * afresh on every call: the check perturbs x in place and restores it.
 *
 * Relative error is |a − n| / max(|a| + |n|, floor), with floor = 1e-6 by default so that entries
 * whose true gradient is ~0 compare in absolute terms.
 */
export function gradCheck(
  x: Float64Array,
  analytic: ArrayLike<number>,
  loss: () => number,
  options: { h?: number; maxEntries?: number; floor?: number; seed?: number } = {},
): GradCheckResult {
  const h = options.h ?? 1e-5;
  const floor = options.floor ?? 1e-6;
  const maxEntries = options.maxEntries ?? 64;
  if (analytic.length !== x.length) {
    throw new Error(`gradCheck: gradient has ${analytic.length} entries, x has ${x.length}`);
  }
  const indices = sampleIndices(x.length, maxEntries, options.seed ?? 1);
  const result: GradCheckResult = {
    maxRelError: 0,
    worst: { index: -1, analytic: 0, numeric: 0 },
    checked: indices.length,
  };
  for (const i of indices) {
    const saved = x[i]!;
    x[i] = saved + h;
    const plus = loss();
    x[i] = saved - h;
    const minus = loss();
    x[i] = saved;
    const numeric = (plus - minus) / (2 * h);
    const a = analytic[i]!;
    const rel = Math.abs(a - numeric) / Math.max(Math.abs(a) + Math.abs(numeric), floor);
    if (!(rel <= result.maxRelError)) {
      result.maxRelError = rel;
      result.worst = { index: i, analytic: a, numeric };
    }
  }
  return result;
}

function sampleIndices(length: number, max: number, seed: number): number[] {
  if (length <= max) return Array.from({ length }, (_, i) => i);
  const next = seededRandom(seed);
  const picked = new Set<number>();
  while (picked.size < max) picked.add(Math.floor(next() * length));
  return [...picked].sort((a, b) => a - b);
}
