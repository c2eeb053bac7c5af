/**
 * Clipped value (critic) loss, the CPU reference for kernels/value_loss.wgsl. verl
 * compute_value_loss, OpenRLHF ValueLoss and TRL PPOTrainer all define, per token:
 *
 *   vClipped = oldValues + clamp(vpreds − oldValues, −cliprangeValue, +cliprangeValue)
 *   l1 = (vpreds − returns)²      l2 = (vClipped − returns)²      ℓ = max(l1, l2)
 *   loss = ½ · aggregate(ℓ, mask, mode)          vf_clipfrac = masked mean of 1[l2 > l1]
 *
 * cliprangeValue null turns clipping off (ℓ = l1, clipfrac 0). The max is pessimistic: the value
 * may move freely towards the return, but a move away from the old value beyond the clip range is
 * not rewarded. ∂ℓ/∂vpreds = 2(vpreds − returns) on the unclipped side and 0 where l2 > l1 (there
 * vClipped sits on a clamp bound, so it does not depend on vpreds); at ties l1 = l2 the unclipped
 * derivative is used.
 */
import { aggregateChecked, checkLossAggOptions, type LossAggOptions } from './loss-aggregation';
import { OpInputError } from './errors';
import { resolveFlavor, type Flavor, type FlavorOption } from './flavor';
import { checkFinite, checkMask, checkMatrix } from './validate';

export interface ValueLossOptions extends FlavorOption {
  /**
   * verl: critic.cliprange_value (default 0.5); OpenRLHF: --value_clip (0.5 in current
   * train_ppo_ray.py, 0.2 in older releases); TRL: PPOConfig.cliprange_value (0.2). Finite, > 0;
   * null disables clipping (OpenRLHF ValueLoss(clip_eps=None)).
   */
  cliprangeValue?: number | null;
  /**
   * verl: critic.loss_agg_mode (default 'token-mean'); OpenRLHF: token-level masked mean (its
   * token_level_loss = True; False would be 'seq-mean-token-mean'); TRL: masked mean over tokens.
   * Default { mode: 'token-mean' } for every flavor. TRL then scales the result by vf_coef
   * (default 0.1) when adding it to the policy loss; verl and OpenRLHF train a separate critic on
   * this loss alone.
   */
  aggregation?: LossAggOptions;
}

export type ResolvedValueLossOptions = {
  cliprangeValue: number | null;
  aggregation: LossAggOptions;
  flavor: Flavor;
};

export const VALUE_LOSS_DEFAULTS: Record<
  Flavor,
  { cliprangeValue: number | null; aggregation: LossAggOptions }
> = {
  verl: { cliprangeValue: 0.5, aggregation: { mode: 'token-mean' } },
  trl: { cliprangeValue: 0.2, aggregation: { mode: 'token-mean' } },
  openrlhf: { cliprangeValue: 0.5, aggregation: { mode: 'token-mean' } },
};

export interface ValueLoss {
  /** ½ · aggregate(ℓ): verl critic/vf_loss. 0 for an all-zero mask. */
  loss: number;
  /** (B, T): ℓ = max(l1, l2) per token (before the ½); 0 at masked positions. */
  tokenLoss: Float32Array;
  /** (B, T): ∂loss/∂vpreds; 0 at masked positions and where the clipped side is taken. */
  gradVpreds: Float32Array;
  /** verl critic/vf_clipfrac: masked mean of 1[l2 > l1]; 0 for an all-zero mask. */
  clipfrac: number;
  /** Σ mask. */
  tokens: number;
  emptyMask: boolean;
}

/** Flavor defaults merged with `options`, checked (shared with the GPU wrapper). */
export function resolveValueLossOptions(options: ValueLossOptions = {}): ResolvedValueLossOptions {
  const op = 'valueLoss';
  const resolved = resolveFlavor(op, VALUE_LOSS_DEFAULTS, options);
  const c = resolved.cliprangeValue;
  if (c !== null && (typeof c !== 'number' || !Number.isFinite(c) || c <= 0)) {
    throw new OpInputError(op, 'cliprangeValue', `must be in (0, ∞) or null, got ${c}`);
  }
  checkLossAggOptions(op, resolved.aggregation);
  return resolved;
}

/**
 * Shape, mask and option checks shared by the CPU reference and the GPU wrapper. `finite: false`
 * leaves the NaN/Inf scan to the GPU's input status.
 */
export function checkValueLossInput(
  vpreds: Float32Array,
  oldValues: Float32Array,
  returns: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ValueLossOptions = {},
  { finite = true }: { finite?: boolean } = {},
): ResolvedValueLossOptions {
  const op = 'valueLoss';
  checkMatrix(op, 'vpreds', vpreds, rows, cols);
  checkMatrix(op, 'oldValues', oldValues, rows, cols);
  checkMatrix(op, 'returns', returns, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  const resolved = resolveValueLossOptions(options);
  if (finite) {
    checkFinite(op, 'vpreds', vpreds, cols);
    checkFinite(op, 'oldValues', oldValues, cols);
    checkFinite(op, 'returns', returns, cols);
  }
  checkMask(op, 'mask', mask, cols);
  return resolved;
}

/**
 * Clipped value loss. vpreds (current critic), oldValues (critic at rollout time), returns, mask:
 * (B, T) row-major.
 */
export function valueLoss(
  vpreds: Float32Array,
  oldValues: Float32Array,
  returns: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ValueLossOptions = {},
): ValueLoss {
  const { cliprangeValue, aggregation } = checkValueLossInput(
    vpreds,
    oldValues,
    returns,
    mask,
    rows,
    cols,
    options,
  );
  const n = rows * cols;
  const tokenLoss = new Float32Array(n);
  // ∂ℓ/∂vpreds per token, in float64 until the aggregation weights are known.
  const local = new Float64Array(n);
  let clipped = 0;
  // #region clipped-value-loss
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const v = vpreds[i]!;
    const ret = returns[i]!;
    const l1 = (v - ret) ** 2;
    let l2 = l1;
    if (cliprangeValue !== null) {
      // Inside the clip range vClipped is vpreds itself (no round trip through oldValues).
      const step = v - oldValues[i]!;
      const vClipped =
        Math.abs(step) <= cliprangeValue ? v : oldValues[i]! + Math.sign(step) * cliprangeValue;
      l2 = (vClipped - ret) ** 2;
    }
    if (l2 > l1) {
      tokenLoss[i] = l2;
      clipped += 1;
    } else {
      tokenLoss[i] = l1;
      local[i] = 2 * (v - ret);
    }
  }
  // #endregion clipped-value-loss
  const agg = aggregateChecked(tokenLoss, mask, rows, cols, aggregation);
  const gradVpreds = new Float32Array(n);
  for (let i = 0; i < n; i++) gradVpreds[i] = 0.5 * agg.weights[i]! * local[i]!;
  return {
    loss: 0.5 * agg.loss,
    tokenLoss,
    gradVpreds,
    clipfrac: agg.tokens > 0 ? clipped / agg.tokens : 0,
    tokens: agg.tokens,
    emptyMask: agg.emptyMask,
  };
}
