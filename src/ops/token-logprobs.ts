/**
 * Per-token log-probabilities and entropy, and their gradient: the CPU reference for
 * kernels/token_logprobs.wgsl and kernels/token_logprobs_backward.wgsl.
 *
 * logits (N, V) row-major, targets (N) token ids, T = temperature. verl, TRL and OpenRLHF all
 * divide the logits by the sampling temperature before the log-softmax, so with z = logits / T:
 *
 *   lse[n]     = log Σ_v exp(z[n, v])
 *   logp[n]    = z[n, t_n] − lse[n]                 verl logprobs_from_logits, TRL selective_log_softmax
 *   entropy[n] = lse[n] − Σ_v p[n, v] z[n, v]       verl entropy_from_logits;  p = exp(z − lse)
 *
 * Everything is computed from the row max m: with s = Σ exp(z − m),
 *   logp = (z_t − m) − log s,   entropy = log s − Σ p (z − m)   (Σ p z − m = Σ p (z − m)),
 * so exp() never overflows for logits up to ±1e4 and beyond. Sums are accumulated in float64.
 */
import { OpInputError } from './errors';
import { checkFinite, checkMatrix, checkRange } from './validate';

const OP = 'tokenLogprobs';
const OP_BACKWARD = 'tokenLogprobsBackward';

export interface TokenLogprobsOptions {
  /**
   * verl: rollout temperature (`logits.div_(temperature)` before log-probs); TRL: temperature
   * (GRPOConfig / PPOConfig); OpenRLHF: --temperature. Finite, > 0. Default 1.
   */
  temperature?: number;
  /** verl: calculate_entropy — also return each row's entropy. Default true. */
  withEntropy?: boolean;
}

/** Options of the backward pass: the temperature the forward pass used. */
export type TokenLogprobsBackwardOptions = Pick<TokenLogprobsOptions, 'temperature'>;

export interface TokenLogprobs {
  /** (N): log p(t_n) under softmax(logits / T). */
  logp: Float32Array;
  /** (N): entropy of softmax(logits / T); undefined when `withEntropy` is false. */
  entropy: Float32Array | undefined;
}

/** The checked temperature of `options` (default 1): finite and > 0. */
export function resolveTemperature(op: string, options: { temperature?: number }): number {
  const temperature = options.temperature ?? 1;
  checkRange(op, 'temperature', temperature, 0, Infinity, { lowOpen: true, highOpen: true });
  return temperature;
}

/** Shape and value checks of (N, V) logits and the temperature; shared with entropyFromLogits. */
export function checkTemperedLogits(
  op: string,
  logits: Float32Array,
  rows: number,
  cols: number,
  options: { temperature?: number },
): number {
  checkMatrix(op, 'logits', logits, rows, cols);
  const temperature = resolveTemperature(op, options);
  checkFinite(op, 'logits', logits, cols);
  return temperature;
}

/** `data` must hold one value per row. */
function checkPerRow(op: string, field: string, data: ArrayLike<number>, rows: number): void {
  if (data.length !== rows) {
    throw new OpInputError(op, field, `must have one entry per row (${rows}), got ${data.length}`);
  }
}

function checkTargets(op: string, targets: Int32Array, rows: number, cols: number): void {
  checkPerRow(op, 'targets', targets, rows);
  for (let n = 0; n < rows; n++) {
    const t = targets[n]!;
    if (!(t >= 0 && t < cols)) {
      throw new OpInputError(
        op,
        'targets',
        `must be token ids in [0, ${cols}) (cols = vocabulary size), but row ${n} has ${t}`,
      );
    }
  }
}

/** Checks shared with the GPU wrapper; returns the resolved temperature. */
export function checkTokenLogprobsInput(
  logits: Float32Array,
  targets: Int32Array,
  rows: number,
  cols: number,
  options: TokenLogprobsOptions = {},
): number {
  const temperature = checkTemperedLogits(OP, logits, rows, cols, options);
  checkTargets(OP, targets, rows, cols);
  return temperature;
}

/** Checks shared with the GPU wrapper; returns the resolved temperature. */
export function checkTokenLogprobsBackwardInput(
  logits: Float32Array,
  targets: Int32Array,
  dLogp: Float32Array,
  dEntropy: Float32Array | undefined,
  rows: number,
  cols: number,
  options: TokenLogprobsBackwardOptions = {},
): number {
  const temperature = checkTemperedLogits(OP_BACKWARD, logits, rows, cols, options);
  checkTargets(OP_BACKWARD, targets, rows, cols);
  checkPerRow(OP_BACKWARD, 'dLogp', dLogp, rows);
  checkFinite(OP_BACKWARD, 'dLogp', dLogp);
  if (dEntropy) {
    checkPerRow(OP_BACKWARD, 'dEntropy', dEntropy, rows);
    checkFinite(OP_BACKWARD, 'dEntropy', dEntropy);
  }
  return temperature;
}

/** Float64 statistics of one tempered row z = x / T, taken relative to the row max. */
export interface RowStats {
  /** m = max_v z_v. */
  max: number;
  /** log s with s = Σ_v exp(z_v − m) ≥ 1. */
  logSum: number;
  /** Σ_v p_v (z_v − m) = Σ p z − m, ≤ 0. The entropy is logSum − meanShifted. */
  meanShifted: number;
}

/**
 * Statistics of row `row` of `logits` (cols wide) at temperature T, in float64: the shared core of
 * tokenLogprobs, its backward and entropyFromLogits (also used by tests in float64).
 */
export function rowStats(
  logits: Float32Array | Float64Array,
  row: number,
  cols: number,
  temperature: number,
): RowStats {
  const base = row * cols;
  let max = -Infinity;
  for (let v = 0; v < cols; v++) max = Math.max(max, logits[base + v]! / temperature);
  let sum = 0;
  let weighted = 0;
  for (let v = 0; v < cols; v++) {
    const d = logits[base + v]! / temperature - max;
    const e = Math.exp(d);
    sum += e;
    // e = 0 where d is hugely negative: p·(z − m) → 0 there, and 0 · (−∞) must not become NaN.
    if (e > 0) weighted += e * d;
  }
  return { max, logSum: Math.log(sum), meanShifted: weighted / sum };
}

/** logits (N, V), targets (N) → logp (N) and, unless withEntropy is false, entropy (N). */
export function tokenLogprobs(
  logits: Float32Array,
  targets: Int32Array,
  rows: number,
  cols: number,
  options: TokenLogprobsOptions = {},
): TokenLogprobs {
  const temperature = checkTokenLogprobsInput(logits, targets, rows, cols, options);
  const withEntropy = options.withEntropy ?? true;
  const logp = new Float32Array(rows);
  const entropy = withEntropy ? new Float32Array(rows) : undefined;
  for (let n = 0; n < rows; n++) {
    const { max, logSum, meanShifted } = rowStats(logits, n, cols, temperature);
    logp[n] = logits[n * cols + targets[n]!]! / temperature - max - logSum;
    if (entropy) entropy[n] = logSum - meanShifted;
  }
  return { logp, entropy };
}

/**
 * Gradient of Σ_n dLogp[n]·logp[n] + dEntropy[n]·entropy[n] with respect to the logits (N, V).
 *
 * With p = softmax(z) and z = x / T:
 *   ∂logp/∂z_v = 1[v = t] − p_v
 *   ∂H/∂z_v: H = lse − Σ_u p_u z_u, ∂lse/∂z_v = p_v and ∂p_u/∂z_v = p_u (1[u = v] − p_v), so
 *     ∂(Σ_u p_u z_u)/∂z_v = p_v + Σ_u z_u p_u (1[u = v] − p_v) = p_v + p_v z_v − p_v Σ_u p_u z_u
 *     ∂H/∂z_v = p_v − (p_v + p_v z_v − p_v Σ p z) = −p_v (z_v − Σ_u p_u z_u)
 *   and ∂z_v/∂x_v = 1/T. Shift invariance lets z_v − Σ p z be taken as (z_v − m) − Σ p (z − m).
 *
 *   dLogits[n, v] = (dLogp[n]·(1[v = t_n] − p_v) − dEntropy[n]·p_v·(z_v − Σ p z)) / T
 *
 * dEntropy undefined means zero. Every row of the result sums to zero (Σ_v p_v = 1).
 */
export function tokenLogprobsBackward(
  logits: Float32Array,
  targets: Int32Array,
  dLogp: Float32Array,
  dEntropy: Float32Array | undefined,
  rows: number,
  cols: number,
  options: TokenLogprobsBackwardOptions = {},
): Float32Array {
  const temperature = checkTokenLogprobsBackwardInput(
    logits,
    targets,
    dLogp,
    dEntropy,
    rows,
    cols,
    options,
  );
  const dLogits = new Float32Array(rows * cols);
  for (let n = 0; n < rows; n++) {
    const { max, logSum, meanShifted } = rowStats(logits, n, cols, temperature);
    const g = dLogp[n]!;
    const h = dEntropy?.[n] ?? 0;
    const base = n * cols;
    for (let v = 0; v < cols; v++) {
      const d = logits[base + v]! / temperature - max;
      const p = Math.exp(d - logSum);
      const onTarget = v === targets[n] ? 1 : 0;
      // p = 0 ⇒ the entropy term is 0 (p·log p → 0), even where d − meanShifted is −∞.
      const entropyTerm = p > 0 ? -p * (d - meanShifted) : 0;
      dLogits[base + v] = (g * (onTarget - p) + h * entropyTerm) / temperature;
    }
  }
  return dLogits;
}
