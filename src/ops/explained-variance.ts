/**
 * Explained variance of the critic, the CPU reference for kernels/explained_variance.wgsl:
 *
 *   ev = 1 − Var[returns − values] / (Var[returns] + epsilon)      over the unmasked tokens
 *
 * 1 means the values predict the returns perfectly, 0 means no better than the returns' mean, and
 * it goes negative when the values are worse than that. Both variances use the same divisor
 * (n − correction), so `correction` only matters through `epsilon` and through when ev is defined.
 *
 *   verl      critic/vf_explained_var = 1 − torch.var(R − V) / (torch.var(R) + 1e-5):
 *             torch.var is unbiased (correction 1) and the 1e-5 keeps the ratio finite.
 *   CleanRL   1 − np.var(R − V) / np.var(R) (correction 0), NaN when np.var(R) == 0.
 *   TRL and OpenRLHF do not report it; their flavors use CleanRL's plain definition.
 *
 * Where numpy or torch would give NaN (fewer than correction + 1 tokens, or Var[R] + epsilon = 0),
 * this returns `value: undefined` and `defined: false` instead: no NaN ever leaves this op, and an
 * undefined metric is visibly different from a bad critic.
 *
 * Variances are two-pass (mean first, then Σ(x − mean)²) in float64, never E[x²] − E[x]².
 */
import { OpInputError } from './errors';
import { resolveFlavor, type Flavor, type FlavorOption } from './flavor';
import { checkFinite, checkMask, checkMatrix } from './validate';

export interface ExplainedVarianceOptions extends FlavorOption {
  /**
   * Divisor n − correction of both variances: 1 = torch.var's default (verl), 0 = np.var's
   * (CleanRL). 0 or 1. Default per flavor: verl 1, trl 0, openrlhf 0.
   */
  correction?: 0 | 1;
  /**
   * Added to Var[returns] (verl: 1e-5, hard-coded in compute_data_metrics; CleanRL: none).
   * Finite, ≥ 0. Default per flavor: verl 1e-5, trl 0, openrlhf 0.
   */
  epsilon?: number;
}

export const EXPLAINED_VARIANCE_DEFAULTS: Record<
  Flavor,
  Required<Omit<ExplainedVarianceOptions, 'flavor'>>
> = {
  verl: { correction: 1, epsilon: 1e-5 },
  trl: { correction: 0, epsilon: 0 },
  openrlhf: { correction: 0, epsilon: 0 },
};

export interface ExplainedVariance {
  /** ev, or undefined where it is not defined (see `defined`). Never NaN. */
  value: number | undefined;
  /** False when fewer than correction + 1 tokens are unmasked or Var[returns] + epsilon = 0. */
  defined: boolean;
  /** Var[returns] over unmasked tokens (divisor n − correction); 0 with too few tokens. */
  varReturns: number;
  /** Var[returns − values] over unmasked tokens; 0 with too few tokens. */
  varResidual: number;
  /** Σ mask. */
  tokens: number;
}

export type ResolvedExplainedVarianceOptions = Required<
  Omit<ExplainedVarianceOptions, 'flavor'>
> & {
  flavor: Flavor;
};

/** Flavor defaults merged with `options`, checked (shared with the GPU wrapper). */
export function resolveExplainedVarianceOptions(
  options: ExplainedVarianceOptions = {},
): ResolvedExplainedVarianceOptions {
  const op = 'explainedVariance';
  const resolved = resolveFlavor(op, EXPLAINED_VARIANCE_DEFAULTS, options);
  if (resolved.correction !== 0 && resolved.correction !== 1) {
    throw new OpInputError(op, 'correction', `must be 0 or 1, got ${resolved.correction}`);
  }
  const eps = resolved.epsilon;
  if (typeof eps !== 'number' || !Number.isFinite(eps) || eps < 0) {
    throw new OpInputError(op, 'epsilon', `must be a finite number ≥ 0, got ${eps}`);
  }
  return resolved;
}

/** Shape, mask and option checks shared with the GPU wrapper (`finite: false`: GPU input status). */
export function checkExplainedVarianceInput(
  returns: Float32Array,
  values: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ExplainedVarianceOptions = {},
  { finite = true }: { finite?: boolean } = {},
): ResolvedExplainedVarianceOptions {
  const op = 'explainedVariance';
  checkMatrix(op, 'returns', returns, rows, cols);
  checkMatrix(op, 'values', values, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  const resolved = resolveExplainedVarianceOptions(options);
  if (finite) {
    checkFinite(op, 'returns', returns, cols);
    checkFinite(op, 'values', values, cols);
  }
  checkMask(op, 'mask', mask, cols);
  return resolved;
}

/** returns, values, mask: (B, T) row-major (any flat layout works: only the mask matters). */
export function explainedVariance(
  returns: Float32Array,
  values: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ExplainedVarianceOptions = {},
): ExplainedVariance {
  const { correction, epsilon } = checkExplainedVarianceInput(
    returns,
    values,
    mask,
    rows,
    cols,
    options,
  );
  const n = rows * cols;
  // Pass 1: means of R and of the residual d = R − V.
  let tokens = 0;
  let sumR = 0;
  let sumD = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    tokens += 1;
    sumR += returns[i]!;
    sumD += returns[i]! - values[i]!;
  }
  if (tokens <= correction) {
    return { value: undefined, defined: false, varReturns: 0, varResidual: 0, tokens };
  }
  const meanR = sumR / tokens;
  const meanD = sumD / tokens;
  // Pass 2: centred sums of squares.
  let ssR = 0;
  let ssD = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const r = returns[i]! - meanR;
    const d = returns[i]! - values[i]! - meanD;
    ssR += r * r;
    ssD += d * d;
  }
  const varReturns = ssR / (tokens - correction);
  const varResidual = ssD / (tokens - correction);
  const denominator = varReturns + epsilon;
  const defined = denominator > 0;
  const value = defined ? 1 - varResidual / denominator : undefined;
  return { value, defined, varReturns, varResidual, tokens };
}
