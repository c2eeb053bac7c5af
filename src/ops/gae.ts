/**
 * Generalized advantage estimation over token (or time) steps, the CPU reference for
 * kernels/gae.wgsl. Rows are sequences (LLM responses) or environments (vectorized rollouts).
 *
 * maskMode 'skip' — verl compute_gae_advantage_return. Walk t = T−1 … 0 with nextValue = 0 and
 * lastGae = 0:
 *   δ = r_t + γ·nextValue − v_t;  g = δ + γλ·lastGae
 *   if m_t = 1: nextValue = v_t, lastGae = g        (masked steps are skipped, not zeroed)
 *   adv_t = lastGae;  ret_t = adv_t + v_t
 * Unmasked outputs equal GAE on the trajectory with the masked steps cut out; a masked step
 * carries the advantage of the next unmasked one.
 *
 * maskMode 'zero-step' — OpenRLHF get_advantages_and_returns (and TRL's PPOTrainer, which zeroes
 * rewards and values at padding the same way): v ← v·m and r ← r·m first, then plain GAE with
 * nextValue_t = v_{t+1} (0 at t = T−1); ret = adv + v (masked v). Masked steps are real steps with
 * zero reward and zero value, so they still discount. (TRL zeroes values only from the second
 * padding position on (padding_mask_p1), so the first padding value bootstraps the last token; a
 * mask that covers one position past each response's end reproduces that.)
 *
 * Optional `dones` (B, T) 0/1 — a terminal at step t ends the episode after t: the walk resets
 * nextValue = 0 and lastGae = 0 before computing step t, so nothing flows across the boundary.
 * (CleanRL stores "episode started" flags: its dones[t + 1] is our dones[t], and its next_done is
 * our dones[T − 1].) In 'skip' mode a done on a masked step still cuts the trajectory there.
 * Optional `bootstrapValue` (B) — value of the state after step T−1 of a truncated rollout: the
 * initial nextValue instead of 0 (ignored when dones[T−1] = 1). In 'zero-step' mode it is
 * discounted through trailing masked steps like any value; use 'skip' for padded rows.
 *
 * Whitening the advantages is a separate op (src/ops/whiten.ts): verl whitens inside its GAE, the
 * trainer composes the two here. Recurrence in float64, outputs rounded to f32.
 */
import { type Flavor, type FlavorOption, resolveFlavor } from './flavor';
import {
  checkBinary,
  checkFinite,
  checkLength,
  checkMatrix,
  checkOneOf,
  checkRange,
} from './validate';

const OP = 'gae';

export const GAE_MASK_MODES = ['skip', 'zero-step'] as const;
export type GaeMaskMode = (typeof GAE_MASK_MODES)[number];

export interface GaeSettings {
  /** verl: algorithm.gamma (1.0); TRL: PPOConfig.gamma (1.0); OpenRLHF: --gamma (1). In [0, 1]. */
  gamma: number;
  /** verl: algorithm.lam (1.0); TRL: PPOConfig.lam (0.95); OpenRLHF: --lambd (0.95). In [0, 1]. */
  lambda: number;
  /**
   * How masked steps enter the recurrence: 'skip' (verl) or 'zero-step' (OpenRLHF, TRL); see the
   * file comment. Default per flavor.
   */
  maskMode: GaeMaskMode;
}

export type GaeOptions = Partial<GaeSettings> & FlavorOption;

export const GAE_DEFAULTS: Record<Flavor, GaeSettings> = {
  verl: { gamma: 1, lambda: 1, maskMode: 'skip' },
  trl: { gamma: 1, lambda: 0.95, maskMode: 'zero-step' },
  openrlhf: { gamma: 1, lambda: 0.95, maskMode: 'zero-step' },
};

export interface GaeInput {
  /** (B, T) per-step rewards. */
  rewards: Float32Array;
  /** (B, T) value estimates V(s_t). */
  values: Float32Array;
  /** (B, T) 1 = real step (response token), 0 = padding / observation token. */
  mask: Float32Array;
  /** (B, T) optional 1 = the episode ends after this step. */
  dones?: Float32Array;
  /** (B) optional value of the state after the last step (truncated rollouts). */
  bootstrapValue?: Float32Array;
}

export interface GaeResult {
  /** (B, T) advantages, not whitened. */
  advantages: Float32Array;
  /** (B, T) returns = advantages + values (masked values in 'zero-step' mode). */
  returns: Float32Array;
}

/** Merges flavor defaults with explicit options and checks their ranges. */
export function resolveGaeOptions(options: GaeOptions = {}): GaeSettings & { flavor: Flavor } {
  const s = resolveFlavor(OP, GAE_DEFAULTS, options);
  checkRange(OP, 'gamma', s.gamma, 0, 1);
  checkRange(OP, 'lambda', s.lambda, 0, 1);
  checkOneOf(OP, 'maskMode', s.maskMode, GAE_MASK_MODES);
  return s;
}

/**
 * Checks shared by gae() and gaeGpu(): shapes, options, mask and dones values; and finiteness of
 * rewards, values and bootstrapValue unless `scanFinite` is false (the GPU path, whose kernel
 * reports non-finite values itself with the same OpInputError class). Returns resolved options.
 */
export function checkGaeInput(
  input: GaeInput,
  rows: number,
  cols: number,
  options: GaeOptions = {},
  scanFinite = true,
): GaeSettings & { flavor: Flavor } {
  const s = resolveGaeOptions(options);
  checkMatrix(OP, 'rewards', input.rewards, rows, cols);
  checkMatrix(OP, 'values', input.values, rows, cols);
  checkMatrix(OP, 'mask', input.mask, rows, cols);
  checkBinary(OP, 'mask', input.mask, cols);
  if (input.dones) {
    checkMatrix(OP, 'dones', input.dones, rows, cols);
    checkBinary(OP, 'dones', input.dones, cols);
  }
  if (input.bootstrapValue) checkLength(OP, 'bootstrapValue', input.bootstrapValue, rows, 'B');
  if (scanFinite) {
    checkFinite(OP, 'rewards', input.rewards, cols);
    checkFinite(OP, 'values', input.values, cols);
    if (input.bootstrapValue) checkFinite(OP, 'bootstrapValue', input.bootstrapValue);
  }
  return s;
}

/** GAE over (rows, cols) row-major tensors; see the file comment for the exact recurrences. */
export function gae(
  input: GaeInput,
  rows: number,
  cols: number,
  options: GaeOptions = {},
): GaeResult {
  const { gamma, lambda, maskMode } = checkGaeInput(input, rows, cols, options);
  const { rewards, values, mask, dones, bootstrapValue } = input;
  const zeroStep = maskMode === 'zero-step';
  const advantages = new Float32Array(rows * cols);
  const returns = new Float32Array(rows * cols);
  // #region recursion
  for (let b = 0; b < rows; b++) {
    let nextValue = bootstrapValue ? bootstrapValue[b]! : 0;
    let lastGae = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      if (dones && dones[i] === 1) {
        nextValue = 0;
        lastGae = 0;
      }
      const m = mask[i]!;
      const r = zeroStep ? rewards[i]! * m : rewards[i]!;
      const v = zeroStep ? values[i]! * m : values[i]!;
      const delta = r + gamma * nextValue - v;
      const g = delta + gamma * lambda * lastGae;
      if (zeroStep || m === 1) {
        nextValue = v;
        lastGae = g;
      }
      advantages[i] = lastGae;
      returns[i] = lastGae + v;
    }
  }
  // #endregion recursion
  return { advantages, returns };
}
