/**
 * Seeded token sampling with temperature, top-k and top-p: the CPU twin of kernels/nn/sample.wgsl.
 * Batched autoregressive generation picks one token per row per step; the GPU does it without
 * reading the logits back, and this function says exactly what it computes.
 *
 * Per row, with l = logits[row, :] (V entries) and T = temperature > 0 (the order of HF's logits
 * warpers: temperature → top-k → top-p):
 *   1. order the tokens by l descending, ties by lower index (the order of z = l / T for any T > 0;
 *      sorting the raw logits keeps CPU and GPU orders identical even where z rounds differently);
 *   2. top-k: keep the first K of that order (all when K = 0 or K ≥ V);
 *   3. softmax over the kept tokens: e_i = exp((l_i − l_max) / T), p_i = e_i / Σ_kept e;
 *   4. top-p: keep the shortest prefix of the order whose cumulative p reaches topP (≥ 1 token);
 *      topP = 1 keeps everything (no rounding can drop a token);
 *   5. renormalise over the final set: q_i = e_i / Σ_final e;
 *   6. u = counterUniform(seed, step, row) ∈ [0, 1); the token is the first one in the order whose
 *      cumulative q exceeds u (if rounding leaves none, the last token with q > 0).
 * T = 0 is greedy: the argmax (lowest index on ties); top-k / top-p do not change it.
 *
 * logprobs[row] = log q(token): the log-probability of the picked token under the FINAL sampling
 * distribution (tempered, truncated and renormalised): the log-prob of the sampling policy that
 * actually produced the token, which RL code needs when it corrects for the sampler. It is NOT the
 * untruncated model log-prob log softmax(l / T) (compute that with tokenLogprobs()); the two agree
 * only without truncation. Greedy sampling is a point mass: logprob 0.
 *
 * Determinism: the result is a pure function of (logits, options, seed, step). The GPU kernel uses
 * the same counter-based hash, so both pick the same token unless f32 rounding puts u within ~1e-6
 * of a cumulative-probability boundary (or puts a top-p cumulative within ~1e-6 of topP).
 * Over a real vocabulary (sample_large.wgsl: f32 exp and sums over ~1e5 terms) the window is ~1e-5
 * relative, and equal tokens' log-probs agree to ~2e-5.
 *
 * Logits should be finite (not checked, like every layer op; -Infinity masks a token on the CPU
 * provided one logit per row is finite). sampleTokens() takes V ≤ 1024 (SAMPLE_MAX_VOCAB), the
 * rows kernels/nn/sample.wgsl sorts in workgroup memory; sampleTokensAnyVocab() is the same
 * algorithm for V ≤ 2^20 (SAMPLE_LARGE_MAX_VOCAB), the twin of kernels/nn/sample_large.wgsl,
 * which finds the same cut-offs by threshold searches instead of a sort.
 */
import { counterUniform } from '../../util/counter-rng';
import { checkInt, checkLength, checkRange } from '../validate';
import type { Floats } from './floats';

const OP = 'sampleTokens';

/** Largest vocabulary a row may have: the GPU kernel sorts one row in workgroup memory. */
export const SAMPLE_MAX_VOCAB = 1024;

/**
 * Largest vocabulary of sampleTokensAnyVocab() and kernels/nn/sample_large.wgsl: 2^20 covers every
 * current tokenizer (Qwen2.5/Qwen3: 151,936) and keeps token counts exact in f32 (< 2^24).
 */
export const SAMPLE_LARGE_MAX_VOCAB = 2 ** 20;

export interface SampleOptions {
  /**
   * Softmax temperature (vLLM/HF `temperature`): logits are divided by it. ≥ 0, finite;
   * 0 = greedy (argmax, lowest index on ties). Default 1.
   */
  temperature?: number;
  /** Keep the k most probable tokens (HF/vLLM `top_k`); 0 = off. Integer ≥ 0. Default 0. */
  topK?: number;
  /**
   * Nucleus: keep the smallest most-probable set with cumulative probability ≥ p (HF/vLLM
   * `top_p`), in (0, 1]; 1 = off. Default 1.
   */
  topP?: number;
}

export interface Sampled {
  /** The sampled token ids: (rows). */
  tokens: Int32Array;
  /** log q(token) under the final truncated, renormalised distribution (0 for greedy): (rows). */
  logprobs: Float32Array;
}

/** Checks the option fields and fills in the defaults; shared with the GPU wrapper. */
export function checkSampleOptions(
  options: SampleOptions,
  op: string = OP,
): Required<SampleOptions> {
  const temperature = options.temperature ?? 1;
  const topK = options.topK ?? 0;
  const topP = options.topP ?? 1;
  checkRange(op, 'temperature', temperature, 0, Infinity, { highOpen: true });
  checkInt(op, 'topK', topK, 0, 2 ** 31 - 1);
  checkRange(op, 'topP', topP, 0, 1, { lowOpen: true });
  return { temperature, topK, topP };
}

/**
 * Shape checks of (rows, vocab) and the counters; shared with the GPU wrappers. `maxVocab` is the
 * entry's limit (SAMPLE_MAX_VOCAB, or SAMPLE_LARGE_MAX_VOCAB for the any-vocabulary entries) and
 * `op` the name its errors carry.
 */
export function checkSampleShape(
  rows: number,
  vocab: number,
  seed: number,
  step: number,
  maxVocab: number = SAMPLE_MAX_VOCAB,
  op: string = OP,
): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'vocab', vocab, 1, maxVocab);
  checkInt(op, 'seed', seed, 0, 2 ** 32 - 1);
  checkInt(op, 'step', step, 0, 2 ** 32 - 1);
}

/** Every check of sampleTokens (shapes, lengths, counters, options); returns resolved options. */
export function checkSampleInput(
  logits: Floats,
  rows: number,
  vocab: number,
  options: SampleOptions,
  seed: number,
  step: number,
  maxVocab: number = SAMPLE_MAX_VOCAB,
  op: string = OP,
): Required<SampleOptions> {
  checkSampleShape(rows, vocab, seed, step, maxVocab, op);
  checkLength(op, 'logits', logits, rows * vocab, `rows × vocab = ${rows} × ${vocab}`);
  return checkSampleOptions(options, op);
}

/** The final sampling distribution of one row. */
export interface RowDistribution {
  /** Kept token ids in sampling order (logit descending, ties by lower index): (n). */
  tokens: Int32Array;
  /** log q of each kept token under the renormalised distribution: (n). */
  logProbs: Float64Array;
}

/**
 * Steps 1–5 of the algorithm for row `row` of logits (rows, vocab): the tokens that remain after
 * temperature, top-k and top-p, and their renormalised log-probabilities (float64).
 * Greedy (temperature 0) is the point mass on the argmax.
 */
export function samplingDistribution(
  logits: Floats,
  row: number,
  vocab: number,
  options: Required<SampleOptions>,
): RowDistribution {
  const base = row * vocab; // this row: logits[base .. base + vocab)
  const logit = (i: number): number => logits[base + i]!;
  const order = new Int32Array(vocab).map((_, i) => i);
  // Strict total order: larger logit first, ties by lower index.
  order.sort((a, b) => (logit(a) > logit(b) ? -1 : logit(a) < logit(b) ? 1 : a - b));
  const { temperature, topK, topP } = options;
  if (temperature === 0) return { tokens: order.slice(0, 1), logProbs: new Float64Array(1) };

  const kept = topK === 0 ? vocab : Math.min(topK, vocab);
  const lmax = logit(order[0]!);
  // x_j = (l − l_max) / T ≤ 0 for the j-th token of the order; e_j = exp(x_j) ∈ (0, 1].
  const x = new Float64Array(kept);
  let total = 0;
  for (let j = 0; j < kept; j++) {
    x[j] = (logit(order[j]!) - lmax) / temperature;
    total += Math.exp(x[j]!);
  }
  let n = kept;
  if (topP < 1) {
    // Shortest prefix with Σ e ≥ topP · Σ_kept e; if rounding never reaches it, keep all.
    const target = topP * total;
    let cumulative = 0;
    for (let j = 0; j < kept; j++) {
      cumulative += Math.exp(x[j]!);
      if (cumulative >= target) {
        n = j + 1;
        break;
      }
    }
  }
  let keptSum = 0;
  for (let j = 0; j < n; j++) keptSum += Math.exp(x[j]!);
  const logZ = Math.log(keptSum);
  const logProbs = new Float64Array(n);
  for (let j = 0; j < n; j++) logProbs[j] = x[j]! - logZ;
  return { tokens: order.slice(0, n), logProbs };
}

/**
 * Step 6: the index (into dist.tokens) picked by the uniform u ∈ [0, 1): the first one whose
 * cumulative probability exceeds u; if rounding leaves none, the last with probability > 0.
 */
export function pickIndex(dist: RowDistribution, u: number): number {
  let cumulative = 0;
  let lastPositive = 0;
  for (let j = 0; j < dist.tokens.length; j++) {
    const q = Math.exp(dist.logProbs[j]!);
    if (q > 0) lastPositive = j;
    cumulative += q;
    if (cumulative > u) return j;
  }
  return lastPositive;
}

/**
 * Samples one token per row of logits (rows, V), V ≤ 1024; see the file comment for the exact
 * algorithm. Returns tokens (rows) and logprobs (rows) = log q(token) under the final truncated,
 * renormalised sampling distribution (0 for greedy, a point mass). Deterministic in (seed, step).
 */
export function sampleTokens(
  logits: Floats,
  rows: number,
  vocab: number,
  options: SampleOptions,
  seed: number,
  step: number,
): Sampled {
  const resolved = checkSampleInput(logits, rows, vocab, options, seed, step);
  return sampleRows(logits, rows, vocab, resolved, seed, step);
}

/**
 * sampleTokens() for any vocabulary up to SAMPLE_LARGE_MAX_VOCAB (2^20): the same algorithm and
 * results (it is the CPU twin of kernels/nn/sample_large.wgsl). Sorting a row costs O(V log V) in
 * JavaScript, about 0.1 s per row at V = 151,936.
 */
export function sampleTokensAnyVocab(
  logits: Floats,
  rows: number,
  vocab: number,
  options: SampleOptions,
  seed: number,
  step: number,
): Sampled {
  const resolved = checkSampleInput(
    logits,
    rows,
    vocab,
    options,
    seed,
    step,
    SAMPLE_LARGE_MAX_VOCAB,
    'sampleTokensAnyVocab',
  );
  return sampleRows(logits, rows, vocab, resolved, seed, step);
}

/** Steps 1–6 for every row, after the checks. */
function sampleRows(
  logits: Floats,
  rows: number,
  vocab: number,
  resolved: Required<SampleOptions>,
  seed: number,
  step: number,
): Sampled {
  const tokens = new Int32Array(rows);
  const logprobs = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    const dist = samplingDistribution(logits, r, vocab, resolved);
    const j = resolved.temperature === 0 ? 0 : pickIndex(dist, counterUniform(seed, step, r));
    tokens[r] = dist.tokens[j]!;
    logprobs[r] = dist.logProbs[j]!;
  }
  return { tokens, logprobs };
}
