/**
 * Per-token KL estimators between the policy and a reference policy, the CPU reference for
 * kernels/kl.wgsl. With Δ = logp − refLogp on the sampled token (Schulman's "Approximating KL
 * divergence" estimators of KL(π ‖ π_ref)):
 *
 *   k1   Δ                          unbiased, high variance, can be negative
 *   abs  |Δ|
 *   k2   ½ Δ²                       biased, low variance
 *   k3   exp(−Δ) − (−Δ) − 1         unbiased, low variance, always ≥ 0
 *        (= r − log r − 1 with log r = refLogp − logp)
 *
 * Framework names: verl kl_penalty / kl_loss_type 'kl'|'k1', 'abs', 'mse'|'k2', 'low_var_kl'|'k3';
 * OpenRLHF --kl_estimator 'k1'|'k2'|'k3'; TRL GRPO uses k3 only.
 *
 * Clamping differs between frameworks and is part of the numbers they report:
 *   'verl'      k3 only: log r = refLogp − logp clamped to [−20, 20] before exp, then the k3 value
 *               clamped to [−10, 10]; k1 / abs / k2 unclamped (verl core_algos.kl_penalty).
 *   'openrlhf'  every estimator's value clamped to [−10, 10] (OpenRLHF compute_approx_kl).
 *   'none'      no clamp (TRL: per_token_kl = exp(ref − logp) − (ref − logp) − 1).
 *
 * Besides the value, each token gets ∂kl/∂logp, 0 where a clamp is active (as autograd gives
 * through torch.clamp; exactly at a bound the gradient passes, as in torch).
 */
import { aggregateChecked, checkLossAggOptions, type LossAggOptions } from './loss-aggregation';
import { OpInputError } from './errors';
import { resolveFlavor, type Flavor, type FlavorOption } from './flavor';
import { checkFinite, checkMask, checkMatrix } from './validate';

export const KL_ESTIMATORS = ['k1', 'k2', 'k3', 'abs'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];

export const KL_CLAMPS = ['verl', 'openrlhf', 'none'] as const;
export type KlClamp = (typeof KL_CLAMPS)[number];

/** verl clamps log r to ±20 before exp() in k3, so exp() never overflows. */
export const VERL_K3_LOG_RATIO_BOUND = 20;
/** verl (k3) and OpenRLHF (all estimators) clamp the estimator's value to ±10. */
export const KL_VALUE_BOUND = 10;

export interface KlOptions extends FlavorOption {
  /**
   * verl: kl_loss_type (actor, default 'low_var_kl' = k3) / kl_penalty (in-reward, default 'kl' =
   * k1); OpenRLHF: --kl_estimator (default 'k1'); TRL: always k3. One of 'k1' | 'k2' | 'k3' | 'abs'.
   * Default per flavor: verl 'k3', trl 'k3', openrlhf 'k1'.
   */
  estimator?: KlEstimator;
  /**
   * Which framework's clamping to apply: 'verl' | 'openrlhf' | 'none' (see the file comment).
   * Default per flavor: verl 'verl', trl 'none', openrlhf 'openrlhf'.
   */
  clamp?: KlClamp;
}

export type ResolvedKlOptions = Required<Omit<KlOptions, 'flavor'>> & { flavor: Flavor };

export const KL_DEFAULTS: Record<Flavor, Required<Omit<KlOptions, 'flavor'>>> = {
  verl: { estimator: 'k3', clamp: 'verl' },
  trl: { estimator: 'k3', clamp: 'none' },
  openrlhf: { estimator: 'k1', clamp: 'openrlhf' },
};

export interface TokenKl {
  /** (B, T): the estimator per token; 0 at masked positions. */
  kl: Float32Array;
  /** (B, T): ∂kl/∂logp per token (∂kl/∂refLogp is its negative); 0 at masked or clamped ones. */
  gradLogp: Float32Array;
}

/** Resolves flavor defaults and checks the estimator and clamp names. */
export function resolveKlOptions(op: string, options: KlOptions = {}): ResolvedKlOptions {
  const resolved = resolveFlavor(op, KL_DEFAULTS, options);
  if (!(KL_ESTIMATORS as readonly string[]).includes(resolved.estimator)) {
    throw new OpInputError(
      op,
      'estimator',
      `must be one of ${KL_ESTIMATORS.join(', ')}, got "${String(resolved.estimator)}"`,
    );
  }
  if (!(KL_CLAMPS as readonly string[]).includes(resolved.clamp)) {
    throw new OpInputError(
      op,
      'clamp',
      `must be one of ${KL_CLAMPS.join(', ')}, got "${String(resolved.clamp)}"`,
    );
  }
  return resolved;
}

/**
 * Shape, mask and option checks shared by the CPU reference and the GPU wrappers. `finite: false`
 * skips the O(B·T) finiteness scan: the GPU path detects NaN/Inf on the device instead (input
 * status) and throws the same OpInputError.
 */
export function checkKlInput(
  op: string,
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: KlOptions = {},
  { finite = true }: { finite?: boolean } = {},
): ResolvedKlOptions {
  checkMatrix(op, 'logp', logp, rows, cols);
  checkMatrix(op, 'refLogp', refLogp, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  const resolved = resolveKlOptions(op, options);
  if (finite) {
    checkFinite(op, 'logp', logp, cols);
    checkFinite(op, 'refLogp', refLogp, cols);
  }
  checkMask(op, 'mask', mask, cols);
  return resolved;
}

/**
 * One token's estimator value and ∂value/∂logp, in float64. `delta` = logp − refLogp. Exported so
 * the property tests can probe the scalar function directly.
 */
export function klEstimate(
  delta: number,
  estimator: KlEstimator,
  clamp: KlClamp,
): { value: number; grad: number } {
  let value: number;
  let grad: number;
  // #region estimators
  switch (estimator) {
    case 'k1':
      value = delta;
      grad = 1;
      break;
    case 'abs':
      value = Math.abs(delta);
      grad = Math.sign(delta); // 0 at Δ = 0, like torch's abs backward
      break;
    case 'k2':
      value = 0.5 * delta * delta;
      grad = delta;
      break;
    case 'k3': {
      // x = log r = refLogp − logp; k3 = eˣ − x − 1, ∂k3/∂logp = −∂k3/∂x = 1 − eˣ.
      let x = -delta;
      let xActive = true;
      if (clamp === 'verl' && Math.abs(x) > VERL_K3_LOG_RATIO_BOUND) {
        x = Math.sign(x) * VERL_K3_LOG_RATIO_BOUND;
        xActive = false;
      }
      // expm1 keeps the small-|x| value accurate and ≥ 0 (eˣ − x − 1 can round to −1e-16).
      value = Math.expm1(x) - x;
      grad = xActive ? -Math.expm1(x) : 0;
      if (clamp === 'verl' && Math.abs(value) > KL_VALUE_BOUND) {
        value = Math.sign(value) * KL_VALUE_BOUND;
        grad = 0;
      }
      break;
    }
  }
  if (clamp === 'openrlhf' && Math.abs(value) > KL_VALUE_BOUND) {
    value = Math.sign(value) * KL_VALUE_BOUND;
    grad = 0;
  }
  return { value, grad };
  // #endregion estimators
}

/**
 * Per-token KL estimate. logp, refLogp, mask: (B, T) row-major; mask is 0/1.
 * Returns kl and ∂kl/∂logp, both (B, T) and 0 at masked positions.
 */
export function perTokenKl(
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: KlOptions = {},
): TokenKl {
  const resolved = checkKlInput('perTokenKl', logp, refLogp, mask, rows, cols, options);
  return tokenKlChecked(logp, refLogp, mask, resolved);
}

/** perTokenKl without the input checks, for callers that have already run checkKlInput. */
function tokenKlChecked(
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  { estimator, clamp }: ResolvedKlOptions,
): TokenKl {
  const kl = new Float32Array(logp.length);
  const gradLogp = new Float32Array(logp.length);
  for (let i = 0; i < logp.length; i++) {
    if (mask[i] === 0) continue;
    const { value, grad } = klEstimate(logp[i]! - refLogp[i]!, estimator, clamp);
    kl[i] = value;
    gradLogp[i] = grad;
  }
  return { kl, gradLogp };
}

export interface KlLossOptions extends KlOptions {
  /**
   * How the per-token KL becomes one scalar. verl: the actor's loss_agg_mode (kl_loss = agg_loss
   * (kld, …), added as kl_loss_coef · kl_loss, kl_loss_coef default 0.001); TRL: the same
   * loss_type as the policy loss (β · per_token_kl is added per token before aggregating);
   * OpenRLHF: masked mean over tokens (token-mean). Default { mode: 'token-mean' }.
   */
  aggregation?: LossAggOptions;
}

export interface KlLoss extends TokenKl {
  /** aggregate(kl): the KL loss term before its coefficient (verl actor/kl_loss). */
  loss: number;
  /** (B, T): ∂loss/∂logp = aggregation weight · ∂kl/∂logp. Replaces TokenKl's local gradient. */
  gradLogp: Float32Array;
  /** Σ mask. */
  tokens: number;
  /** True when the mask is all zero (loss and gradients are then 0). */
  emptyMask: boolean;
}

/** Option checks of klLoss, shared with its GPU wrapper. Returns the aggregation to use. */
export function resolveKlLossAggregation(op: string, options: KlLossOptions): LossAggOptions {
  const aggregation = options.aggregation ?? { mode: 'token-mean' };
  checkLossAggOptions(op, aggregation);
  return aggregation;
}

/**
 * The KL loss term (verl use_kl_loss; TRL beta > 0; OpenRLHF --use_kl_loss): loss = aggregate(kl)
 * with its gradient through the aggregation weights. Multiply both by the framework's coefficient
 * (verl kl_loss_coef, TRL beta, OpenRLHF init_kl_coef) when adding it to the policy loss.
 */
export function klLoss(
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: KlLossOptions = {},
): KlLoss {
  const resolved = checkKlInput('klLoss', logp, refLogp, mask, rows, cols, options);
  const aggregation = resolveKlLossAggregation('klLoss', options);
  const { kl, gradLogp: local } = tokenKlChecked(logp, refLogp, mask, resolved);
  const { loss, weights, tokens, emptyMask } = aggregateChecked(kl, mask, rows, cols, aggregation);
  const gradLogp = new Float32Array(rows * cols);
  for (let i = 0; i < gradLogp.length; i++) gradLogp[i] = weights[i]! * local[i]!;
  return { kl, gradLogp, loss, tokens, emptyMask };
}

export interface KlRewardPenalty {
  /** (B, T): tokenRewards − β·kl (unchanged at masked positions, where kl is 0). */
  rewards: Float32Array;
  /**
   * Mean over the B sequences of each sequence's masked-mean KL: verl's actor/reward_kl_penalty,
   * the `current_kl` it feeds to the KL controller. A sequence with an empty mask counts as 0.
   */
  klMean: number;
}

/** β of klRewardPenalty: a finite number ≥ 0 (also checked by the GPU encode path). */
export function checkKlRewardBeta(beta: number): void {
  if (typeof beta !== 'number' || !Number.isFinite(beta) || beta < 0) {
    throw new OpInputError('klRewardPenalty', 'beta', `must be a finite number ≥ 0, got ${beta}`);
  }
}

/**
 * Shape, β, finiteness and mask checks of klRewardPenalty, shared with its GPU wrapper. The GPU path
 * passes `{ finite: false }`: its kernel checks tokenRewards and kl itself (input status).
 */
export function checkKlRewardPenaltyInput(
  tokenRewards: Float32Array,
  kl: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  beta: number,
  { finite = true }: { finite?: boolean } = {},
): void {
  const op = 'klRewardPenalty';
  checkMatrix(op, 'tokenRewards', tokenRewards, rows, cols);
  checkMatrix(op, 'kl', kl, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  checkKlRewardBeta(beta);
  if (finite) {
    checkFinite(op, 'tokenRewards', tokenRewards, cols);
    checkFinite(op, 'kl', kl, cols);
  }
  checkMask(op, 'mask', mask, cols);
}

/**
 * KL "in the reward" (verl apply_kl_penalty with use_kl_in_reward; OpenRLHF compute_reward; TRL
 * PPO): rewards ← tokenRewards − β·kl. tokenRewards, kl, mask: (B, T); kl from perTokenKl (verl
 * default estimator for this use: kl_penalty 'kl' = k1). β ≥ 0 (verl kl_ctrl.kl_coef, default
 * 0.001; OpenRLHF init_kl_coef, default 0.01; TRL PPO kl_coef, default 0.05).
 */
export function klRewardPenalty(
  tokenRewards: Float32Array,
  kl: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  beta: number,
): KlRewardPenalty {
  checkKlRewardPenaltyInput(tokenRewards, kl, mask, rows, cols, beta);
  const rewards = new Float32Array(rows * cols);
  let klMean = 0;
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    let count = 0;
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const m = mask[i]!;
      rewards[i] = tokenRewards[i]! - beta * m * kl[i]!;
      sum += m * kl[i]!;
      count += m;
    }
    klMean += count > 0 ? sum / count : 0;
  }
  return { rewards, klMean: klMean / rows };
}
