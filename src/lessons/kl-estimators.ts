/**
 * The KL lesson's numbers, all from the real estimator op (src/ops/kl.ts), so the plot shows
 * exactly what the trainer computes:
 *
 *  - curves: each estimator's value for one sampled token as a function of the log-ratio
 *    x = log r = log(π_ref(a)/π_θ(a)), from klEstimate. The op takes Δ = logp − refLogp = −x, so
 *    k1 = Δ = −x, k2 = ½Δ² = ½x², k3 = eˣ − 1 − x (Schulman's notation, with r = π_ref/π_θ).
 *  - a sampling experiment: N tokens drawn from a small categorical π_θ (seeded), each token's
 *    estimate from perTokenKl on a (1, N) batch, the trainer's own path, then the sample mean and
 *    standard deviation of each estimator beside the exact KL(π_θ ‖ π_ref) in float64.
 *  - exact moments: the mean and standard deviation of each estimator under π_θ, summed over the
 *    outcomes (the limit the sampled numbers approach): k1 and k3 have mean KL exactly, k2 does not.
 *
 * Pure functions on small inputs; bad input is a RangeError naming the function, the field, the
 * index where there is one, and the valid range. Estimator and clamp names are checked by the op.
 */
import { KL_CLAMPS, klEstimate, perTokenKl, type KlClamp, type KlEstimator } from '../ops/kl';
import { seededRandom } from '../util/random';

/** The estimators the lesson compares (the op also has 'abs', which no framework defaults to). */
export const LESSON_ESTIMATORS = ['k1', 'k2', 'k3'] as const satisfies readonly KlEstimator[];
export type LessonEstimator = (typeof LESSON_ESTIMATORS)[number];

/** How far the lesson's slider may move π_θ from π_ref (the tilt s of tiltedPolicy). */
export const MAX_SHIFT = 2;
/** Outcomes at most; the lesson uses six. */
const MAX_OUTCOMES = 64;
/** Samples at most per experiment. */
const MAX_SAMPLES = 100_000;

/**
 * π_ref of the lesson: six outcomes, a few likely and a few rare, like a language model's next
 * token. Sums to 1 exactly in decimal; in float64 to within 1e-16.
 */
export const LESSON_REF = [0.3, 0.25, 0.2, 0.12, 0.08, 0.05] as const;

/**
 * The direction the slider tilts π_θ in: toward the rare outcomes (π_θ ∝ π_ref · e^{s·d}),
 * as RL pushes a policy toward answers the reference found unlikely.
 */
export const LESSON_TILT = [-1, -0.6, -0.2, 0.2, 0.6, 1] as const;

function fail(fn: string, message: string): never {
  throw new RangeError(`${fn}: ${message}`);
}

/** Checks a probability vector: 2…64 finite entries ≥ 0 summing to 1 (within 1e-6). */
function checkDistribution(fn: string, field: string, probs: readonly number[]): void {
  if (!Array.isArray(probs) || probs.length < 2 || probs.length > MAX_OUTCOMES) {
    fail(fn, `${field} must hold 2 to ${MAX_OUTCOMES} probabilities, got ${probs?.length}`);
  }
  let sum = 0;
  probs.forEach((p, i) => {
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 1) {
      fail(fn, `${field}[${i}] must be a probability in [0, 1], got ${p}`);
    }
    sum += p;
  });
  if (Math.abs(sum - 1) > 1e-6) fail(fn, `${field} must sum to 1 (within 1e-6), got ${sum}`);
}

/** Both distributions valid, same length, and π_ref > 0 wherever π_θ > 0 (else the KL is ∞). */
function checkPair(fn: string, policy: readonly number[], ref: readonly number[]): void {
  checkDistribution(fn, 'policy', policy);
  checkDistribution(fn, 'ref', ref);
  if (policy.length !== ref.length) {
    fail(fn, `policy and ref must have the same length, got ${policy.length} and ${ref.length}`);
  }
  policy.forEach((p, i) => {
    if (p > 0 && ref[i] === 0) {
      fail(fn, `ref[${i}] must be > 0 where policy[${i}] > 0 (${p}): the KL would be infinite`);
    }
  });
}

/**
 * One estimator's value for one token with log-ratio x = log(π_ref/π_θ), from klEstimate (which
 * takes Δ = logp − refLogp = −x). `clamp` defaults to 'verl', the trainer's: k3 clamps x to ±20
 * and its value to ±10; k1 and k2 are never clamped under verl.
 */
export function klAt(x: number, estimator: LessonEstimator, clamp: KlClamp = 'verl'): number {
  if (typeof x !== 'number' || !Number.isFinite(x)) fail('klAt', `x must be finite, got ${x}`);
  checkEstimator('klAt', estimator, clamp);
  return klEstimate(-x, estimator, clamp).value;
}

/** klEstimate trusts its caller with the names; the lesson's functions check them first. */
function checkEstimator(fn: string, estimator: string, clamp: string): void {
  if (!(LESSON_ESTIMATORS as readonly string[]).includes(estimator)) {
    fail(fn, `estimator must be one of ${LESSON_ESTIMATORS.join(', ')}, got '${estimator}'`);
  }
  if (!(KL_CLAMPS as readonly string[]).includes(clamp)) {
    fail(fn, `clamp must be one of ${KL_CLAMPS.join(', ')}, got '${clamp}'`);
  }
}

export interface KlCurvePoint {
  /** log r = log(π_ref/π_θ) of the sampled token. */
  x: number;
  value: number;
}

export interface KlCurveOptions {
  xMin?: number;
  xMax?: number;
  /** Evenly spaced points from xMin to xMax, both included: 2…2001. */
  points?: number;
  clamp?: KlClamp;
}

/** klAt over an even grid of log-ratios (default −2…2, 161 points, verl clamps). */
export function klCurve(estimator: LessonEstimator, options: KlCurveOptions = {}): KlCurvePoint[] {
  const { xMin = -2, xMax = 2, points = 161, clamp = 'verl' } = options;
  if (!Number.isFinite(xMin) || !Number.isFinite(xMax) || !(xMin < xMax)) {
    fail('klCurve', `xMin < xMax must both be finite, got ${xMin} and ${xMax}`);
  }
  if (!Number.isInteger(points) || points < 2 || points > 2001) {
    fail('klCurve', `points must be an integer in [2, 2001], got ${points}`);
  }
  checkEstimator('klCurve', estimator, clamp);
  return Array.from({ length: points }, (_, i) => {
    const x = xMin + ((xMax - xMin) * i) / (points - 1);
    return { x, value: klEstimate(-x, estimator, clamp).value };
  });
}

/**
 * π_θ ∝ π_ref · e^{s·d}: the reference tilted by s along d (an exponential tilt keeps every
 * outcome's support, so the KL stays finite). s = 0 gives π_ref itself. Float64.
 */
export function tiltedPolicy(
  shift: number,
  ref: readonly number[] = LESSON_REF,
  direction: readonly number[] = LESSON_TILT,
): number[] {
  if (typeof shift !== 'number' || !Number.isFinite(shift) || shift < 0 || shift > MAX_SHIFT) {
    fail('tiltedPolicy', `shift must be in [0, ${MAX_SHIFT}], got ${shift}`);
  }
  checkDistribution('tiltedPolicy', 'ref', ref);
  if (direction.length !== ref.length) {
    fail('tiltedPolicy', `direction must have ref's length ${ref.length}, got ${direction.length}`);
  }
  direction.forEach((d, i) => {
    if (!Number.isFinite(d) || Math.abs(d) > 10) {
      fail('tiltedPolicy', `direction[${i}] must be in [−10, 10], got ${d}`);
    }
  });
  if (shift === 0) return [...ref]; // e⁰ = 1: the reference itself, bit for bit
  const weights = ref.map((q, i) => q * Math.exp(shift * direction[i]!));
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => w / total);
}

/** KL(π_θ ‖ π_ref) = Σ_a π_θ(a) log(π_θ(a)/π_ref(a)), float64; outcomes with π_θ = 0 add 0. */
export function exactKl(policy: readonly number[], ref: readonly number[]): number {
  checkPair('exactKl', policy, ref);
  let kl = 0;
  policy.forEach((p, i) => {
    if (p > 0) kl += p * Math.log(p / ref[i]!);
  });
  return kl;
}

export interface Moments {
  mean: number;
  /** Standard deviation of one token's estimate (population for exact moments, n − 1 sampled). */
  std: number;
}

/**
 * The exact mean and standard deviation of each estimator when the token is drawn from π_θ:
 * Σ_a π_θ(a)·k(x_a) with x_a = log(π_ref(a)/π_θ(a)), each k(x_a) from klEstimate (no clamp, so
 * these are the estimators' true moments). Float64.
 */
export function exactMoments(
  policy: readonly number[],
  ref: readonly number[],
): Record<LessonEstimator, Moments> {
  checkPair('exactMoments', policy, ref);
  const out = {} as Record<LessonEstimator, Moments>;
  for (const estimator of LESSON_ESTIMATORS) {
    let mean = 0;
    let second = 0;
    const values = policy.map((p, i) =>
      p > 0 ? klEstimate(Math.log(p) - Math.log(ref[i]!), estimator, 'none').value : 0,
    );
    policy.forEach((p, i) => (mean += p * values[i]!));
    // Second pass about the mean (never E[k²] − E[k]²).
    policy.forEach((p, i) => (second += p * (values[i]! - mean) ** 2));
    out[estimator] = { mean, std: Math.sqrt(second) };
  }
  return out;
}

export interface KlSampleResult {
  /** KL(π_θ ‖ π_ref), float64. */
  exact: number;
  /** N sampled outcome indices. */
  samples: Int32Array;
  /** Per estimator: (N) the op's per-token values, and their sample mean and std (n − 1). */
  estimates: Record<LessonEstimator, Moments & { values: Float32Array }>;
}

/**
 * Draws `n` tokens from π_θ (inverse CDF on mulberry32 uniforms from `seed`), then scores them as
 * the trainer does: logp = log π_θ(a), refLogp = log π_ref(a), both (1, n) float32 with an all-ones
 * mask, through perTokenKl with the given clamp (default 'verl'). Mean and std in float64, two
 * passes.
 */
export function sampleKl(
  policy: readonly number[],
  ref: readonly number[],
  n: number,
  seed: number,
  clamp: KlClamp = 'verl',
): KlSampleResult {
  checkPair('sampleKl', policy, ref);
  if (!Number.isInteger(n) || n < 2 || n > MAX_SAMPLES) {
    fail('sampleKl', `n must be an integer in [2, ${MAX_SAMPLES}], got ${n}`);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    fail('sampleKl', `seed must be an integer in [0, 2^32 − 1], got ${seed}`);
  }
  const next = seededRandom(seed);
  const cdf: number[] = [];
  policy.reduce((acc, p, i) => (cdf[i] = acc + p), 0);
  // The last outcome with π_θ > 0 takes any u the rounded CDF leaves uncovered.
  let last = policy.length - 1;
  while (policy[last] === 0) last -= 1;
  const samples = new Int32Array(n);
  const logp = new Float32Array(n);
  const refLogp = new Float32Array(n);
  for (let t = 0; t < n; t++) {
    const u = next();
    let a = cdf.findIndex((c, i) => u < c && policy[i]! > 0);
    if (a < 0) a = last;
    samples[t] = a;
    logp[t] = Math.log(policy[a]!);
    refLogp[t] = Math.log(ref[a]!);
  }
  const mask = new Float32Array(n).fill(1);
  const estimates = {} as KlSampleResult['estimates'];
  for (const estimator of LESSON_ESTIMATORS) {
    const { kl } = perTokenKl(logp, refLogp, mask, 1, n, { estimator, clamp });
    let mean = 0;
    for (const v of kl) mean += v;
    mean /= n;
    let ss = 0;
    for (const v of kl) ss += (v - mean) ** 2;
    estimates[estimator] = { mean, std: Math.sqrt(ss / (n - 1)), values: kl };
  }
  return { exact: exactKl(policy, ref), samples, estimates };
}
