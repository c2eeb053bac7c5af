/**
 * REINFORCE++ advantages; CPU reference for kernels/reinforce_pp_returns.wgsl (returns-to-go),
 * composed with the whitening, token-sum, group and broadcast ops.
 *
 * discountedReturns, maskMode 'reset' (verl compute_reinforce_plus_plus_outcome_advantage):
 *   running = 0; for t = T−1 … 0: running = r_t + γ·running; ret_t = running; running ← running·m_t
 * (a masked step still gets its own return, but nothing flows back across it). maskMode
 * 'zero-reward' (OpenRLHF get_cumulative_returns): r ← r·m, then the same walk without the reset.
 *
 * reinforcePlusPlus: advantages = whiten(ret, mask) · mask (verl masked_whiten; OpenRLHF
 * normalizes advantages with its own whitening, picked by flavor 'openrlhf').
 *
 * reinforcePlusPlusBaseline (verl compute_reinforce_plus_plus_baseline_outcome_advantage):
 *   score_b = Σ_t r_t;  score_b −= mean of its group (a group of one: mean 0);
 *   advantages = whiten(score_b · m_bt, mask) · mask
 * OpenRLHF's reinforce_baseline differs in ways this op does not model: it subtracts the group mean
 * from the sequence reward *before* adding the per-token KL penalty, then takes discounted
 * returns-to-go over tokens (get_cumulative_returns) instead of broadcasting one constant per row;
 * its group of one is its own mean (advantage 0: singleSampleGroups 'own-mean'); and it whitens
 * with the population variance and a clamp (flavor 'openrlhf' here). With a single reward at each
 * response's last token, no KL in the reward and γ = 1, the two agree.
 *
 * TRL has no REINFORCE++ trainer; flavor 'trl' uses verl's definitions (TRL's whitening equals
 * verl's anyway).
 */
import { sumOverTokens, broadcastToTokens } from './broadcast';
import { type Flavor, type FlavorOption, resolveFlavor } from './flavor';
import { type GroupCoreSettings, checkGroups, groupAdvantagesCore } from './group-advantages';
import { checkBinary, checkFinite, checkMatrix, checkOneOf, checkRange } from './validate';
import {
  type WhitenOptions,
  type WhitenSettings,
  type WhitenStats,
  resolveWhitenOptions,
  whiten,
} from './whiten';

export const RETURNS_MASK_MODES = ['reset', 'zero-reward'] as const;
export type ReturnsMaskMode = (typeof RETURNS_MASK_MODES)[number];

export interface ReturnsSettings {
  /** verl: algorithm.gamma (1.0); OpenRLHF: --gamma (1). Discount, in [0, 1]. */
  gamma: number;
  /** 'reset' (verl) or 'zero-reward' (OpenRLHF); see the file comment. Default per flavor. */
  maskMode: ReturnsMaskMode;
}

export type ReturnsOptions = Partial<ReturnsSettings> & FlavorOption;

export const RETURNS_DEFAULTS: Record<Flavor, ReturnsSettings> = {
  verl: { gamma: 1, maskMode: 'reset' },
  trl: { gamma: 1, maskMode: 'reset' },
  openrlhf: { gamma: 1, maskMode: 'zero-reward' },
};

export interface ReinforcePPOptions extends ReturnsOptions {
  /** Whitening of the returns; unset fields take the same flavor's whitening defaults. */
  whiten?: Omit<WhitenOptions, 'flavor'>;
}

export interface ReinforcePPResult {
  /** (B, T) whitened returns, 0 at masked positions. */
  advantages: Float32Array;
  /** (B, T) discounted returns-to-go (not masked: verl returns them as they are). */
  returns: Float32Array;
  /** Statistics of the whitening. */
  whitenStats: WhitenStats;
}

export interface ReinforcePPBaselineSettings {
  /**
   * A group of one sample: verl 'mean0' (baseline 0, the score itself is whitened);
   * OpenRLHF 'own-mean' (the sample is its own mean: advantage 0). Default per flavor.
   */
  singleSampleGroups: 'mean0' | 'own-mean';
}

export interface ReinforcePPBaselineOptions
  extends Partial<ReinforcePPBaselineSettings>, FlavorOption {
  /** Whitening of the broadcast scores; unset fields take the same flavor's whitening defaults. */
  whiten?: Omit<WhitenOptions, 'flavor'>;
}

export const REINFORCE_PP_BASELINE_DEFAULTS: Record<Flavor, ReinforcePPBaselineSettings> = {
  verl: { singleSampleGroups: 'mean0' },
  trl: { singleSampleGroups: 'mean0' },
  openrlhf: { singleSampleGroups: 'own-mean' },
};

export interface ReinforcePPBaselineResult {
  /** (B, T) whitened, baseline-subtracted scores, 0 at masked positions. */
  advantages: Float32Array;
  /** (B) Σ_t r_t minus the group mean (before broadcasting and whitening). */
  centeredScores: Float32Array;
  whitenStats: WhitenStats;
}

export interface ResolvedReinforcePP {
  returns: ReturnsSettings;
  whiten: WhitenSettings;
}

/** Merges flavor defaults (returns and whitening) with explicit options and checks their ranges. */
export function resolveReinforcePPOptions(
  op: string,
  options: ReinforcePPOptions = {},
): ResolvedReinforcePP {
  const { whiten: whitenOptions, ...rest } = options;
  const s = resolveFlavor(op, RETURNS_DEFAULTS, rest);
  checkRange(op, 'gamma', s.gamma, 0, 1);
  checkOneOf(op, 'maskMode', s.maskMode, RETURNS_MASK_MODES);
  const whiten = resolveWhitenOptions(op, { ...whitenOptions, flavor: s.flavor });
  return { returns: { gamma: s.gamma, maskMode: s.maskMode }, whiten };
}

/**
 * Checks shared by discountedReturns()/reinforcePlusPlus() and their GPU wrappers: shapes,
 * options, mask values; finite rewards unless `scanFinite` is false (GPU path, checked by the
 * kernel with the same error class). Returns the resolved returns and whitening settings.
 */
export function checkReinforcePPInput(
  op: string,
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ReinforcePPOptions = {},
  scanFinite = true,
): ResolvedReinforcePP {
  const settings = resolveReinforcePPOptions(op, options);
  checkMatrix(op, 'rewards', rewards, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  checkBinary(op, 'mask', mask, cols);
  if (scanFinite) checkFinite(op, 'rewards', rewards, cols);
  return settings;
}

/** Returns-to-go (rows, cols) → (rows, cols); float64 running sum, see the file comment. */
export function discountedReturns(
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ReturnsOptions = {},
): Float32Array {
  const { gamma, maskMode } = checkReinforcePPInput(
    'discountedReturns',
    rewards,
    mask,
    rows,
    cols,
    options,
  ).returns;
  const reset = maskMode === 'reset';
  const out = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    let running = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      const m = mask[i]!;
      running = (reset ? rewards[i]! : rewards[i]! * m) + gamma * running;
      out[i] = running;
      if (reset) running *= m;
    }
  }
  return out;
}

/** REINFORCE++: rewards (B, T), mask (B, T) → whitened returns-to-go. */
export function reinforcePlusPlus(
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ReinforcePPOptions = {},
): ReinforcePPResult {
  const op = 'reinforcePlusPlus';
  const settings = checkReinforcePPInput(op, rewards, mask, rows, cols, options);
  const returns = discountedReturns(rewards, mask, rows, cols, settings.returns);
  const { output, stats } = whiten(returns, mask, rows, cols, settings.whiten);
  return { advantages: output, returns, whitenStats: stats };
}

export interface ResolvedReinforcePPBaseline {
  /** Group centering as group-core settings (plain s − μ). */
  center: GroupCoreSettings;
  whiten: WhitenSettings;
}

/** Merges flavor defaults (group rule and whitening) with explicit options; checks their ranges. */
export function resolveReinforcePPBaselineOptions(
  options: ReinforcePPBaselineOptions = {},
): ResolvedReinforcePPBaseline {
  const op = 'reinforcePlusPlusBaseline';
  const { whiten: whitenOptions, ...rest } = options;
  const s = resolveFlavor(op, REINFORCE_PP_BASELINE_DEFAULTS, rest);
  checkOneOf(op, 'singleSampleGroups', s.singleSampleGroups, ['mean0', 'own-mean'] as const);
  const whiten = resolveWhitenOptions(op, { ...whitenOptions, flavor: s.flavor });
  const center: GroupCoreSettings = {
    estimator: 'grpo',
    stdNormalization: 'none',
    stdUnbiased: true,
    stdEpsilon: 1,
    singles: s.singleSampleGroups === 'mean0' ? 'mean0' : 'own',
  };
  return { center, whiten };
}

/**
 * Checks shared by reinforcePlusPlusBaseline() and its GPU wrapper; returns resolved settings.
 * Groups: B = numGroups × groupSize, contiguous.
 */
export function checkReinforcePPBaselineInput(
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  groupSize: number,
  options: ReinforcePPBaselineOptions = {},
  scanFinite = true,
): ResolvedReinforcePPBaseline {
  const op = 'reinforcePlusPlusBaseline';
  const settings = resolveReinforcePPBaselineOptions(options);
  checkMatrix(op, 'rewards', rewards, rows, cols);
  checkMatrix(op, 'mask', mask, rows, cols);
  checkBinary(op, 'mask', mask, cols);
  checkGroups(op, rows, groupSize, true);
  if (scanFinite) checkFinite(op, 'rewards', rewards, cols);
  return settings;
}

/** REINFORCE++-baseline: rewards (B, T), mask (B, T), contiguous groups of groupSize → (B, T). */
export function reinforcePlusPlusBaseline(
  rewards: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  groupSize: number,
  options: ReinforcePPBaselineOptions = {},
): ReinforcePPBaselineResult {
  const settings = checkReinforcePPBaselineInput(rewards, mask, rows, cols, groupSize, options);
  const scores = sumOverTokens(rewards, rows, cols);
  const centered = groupAdvantagesCore(scores, groupSize, settings.center).advantages;
  const tokens = broadcastToTokens(centered, mask, rows, cols);
  const { output, stats } = whiten(tokens, mask, rows, cols, settings.whiten);
  return { advantages: output, centeredScores: centered, whitenStats: stats };
}
