/**
 * Outcome advantages from groups of samples of the same prompt; the CPU reference for
 * kernels/group_advantages.wgsl. scores: (B) one scalar per sequence, B = numGroups × G with groups
 * contiguous (prompt-major, G samples each), as verl/TRL/OpenRLHF lay them out after repeat.
 *
 * groupAdvantages (GRPO family), per group with mean μ and std σ (two-pass, float64):
 *   'group':  (s − μ) / (σ + ε)       verl compute_grpo_outcome_advantage (ε = 1e-6),
 *                                     TRL scale_rewards='group' (1e-4), OpenRLHF group_norm (1e-9)
 *   'batch':  (s − μ) / (σ_B + ε)     TRL scale_rewards='batch': σ_B over all B scores, μ per group
 *   'none':   s − μ                   Dr. GRPO: verl norm_adv_by_std_in_grpo=False, TRL 'none',
 *                                     OpenRLHF dr_grpo
 * rlooAdvantages (verl compute_rloo_outcome_advantage, OpenRLHF and TRL rloo):
 *   s_i − mean of the other G − 1 scores = (G·s_i − Σ s) / (G − 1)
 *
 * σ is torch.std: unbiased by default. A group whose scores are all equal has σ = 0 exactly (two
 * passes in f64 make that an equivalence); it is counted in fracRewardZeroStd and its advantages
 * are exactly 0. TRL counts with torch.isclose(σ, 0) (|σ| ≤ 1e-8), and in 'batch' mode it tests
 * σ_B rather than each group's σ; we always report the per-group count.
 *
 * Groups of one (G = 1): verl sets μ = 0, σ = 1 (so the advantage is s/(1 + ε), or s, and RLOO's
 * baseline is 0); TRL requires G ≥ 2; OpenRLHF would divide by zero (NaN) — both 'error' here.
 */
import { OpInputError } from './errors';
import { type Flavor, type FlavorOption, resolveFlavor } from './flavor';
import { checkFinite, checkInt, checkOneOf, checkRange } from './validate';
import { maskedMoments, varianceFromMoments } from './whiten';

export const STD_NORMALIZATIONS = ['group', 'batch', 'none'] as const;
export type StdNormalization = (typeof STD_NORMALIZATIONS)[number];

export interface GroupAdvantageSettings {
  /**
   * What s − μ is divided by. verl: norm_adv_by_std_in_grpo (true → 'group', false → 'none');
   * TRL: scale_rewards ('group' | 'batch' | 'none'); OpenRLHF: advantage_estimator ('group_norm' →
   * 'group', 'dr_grpo' → 'none'). Default 'group'.
   */
  stdNormalization: StdNormalization;
  /** torch.std's unbiased (n − 1) estimate, used by all three. Default true. */
  stdUnbiased: boolean;
  /**
   * Added to σ before dividing. verl: epsilon (1e-6); TRL: 1e-4 (hard-coded); OpenRLHF: 1e-9
   * (hard-coded). Must be > 0 (finite).
   */
  stdEpsilon: number;
  /**
   * Groups of one sample. verl: 'mean0-std1' (μ = 0, σ = 1); TRL (num_generations ≥ 2) and
   * OpenRLHF (std of one sample is NaN): 'error'.
   */
  singleSampleGroups: 'mean0-std1' | 'error';
}

export type GroupAdvantageOptions = Partial<GroupAdvantageSettings> & FlavorOption;

export const GROUP_ADVANTAGE_DEFAULTS: Record<Flavor, GroupAdvantageSettings> = {
  verl: {
    stdNormalization: 'group',
    stdUnbiased: true,
    stdEpsilon: 1e-6,
    singleSampleGroups: 'mean0-std1',
  },
  trl: {
    stdNormalization: 'group',
    stdUnbiased: true,
    stdEpsilon: 1e-4,
    singleSampleGroups: 'error',
  },
  openrlhf: {
    stdNormalization: 'group',
    stdUnbiased: true,
    stdEpsilon: 1e-9,
    singleSampleGroups: 'error',
  },
};

export interface RlooSettings {
  /**
   * Groups of one sample have no leave-one-out baseline. verl: 'baseline0' (advantage = s);
   * OpenRLHF (divides by n_samples_per_prompt − 1) and TRL (num_generations ≥ 2): 'error'.
   */
  singleSampleGroups: 'baseline0' | 'error';
}

export type RlooOptions = Partial<RlooSettings> & FlavorOption;

export const RLOO_DEFAULTS: Record<Flavor, RlooSettings> = {
  verl: { singleSampleGroups: 'baseline0' },
  trl: { singleSampleGroups: 'error' },
  openrlhf: { singleSampleGroups: 'error' },
};

/**
 * The one parameterization the CPU core and the kernel share (GRPO, Dr. GRPO, TRL batch scaling,
 * RLOO, and the REINFORCE++ baseline's plain centering).
 */
export interface GroupCoreSettings {
  estimator: 'grpo' | 'rloo';
  stdNormalization: StdNormalization;
  stdUnbiased: boolean;
  stdEpsilon: number;
  /**
   * A group of one: 'mean0' — μ = 0, σ = 1 (verl); 'own' — its own score is its mean, σ = 0, so
   * it counts as zero-std and gets advantage 0 (OpenRLHF's reinforce_baseline); 'error' — G = 1
   * is rejected by the checks (TRL, OpenRLHF's GRPO and RLOO).
   */
  singles: 'mean0' | 'own' | 'error';
}

export interface GroupAdvantageStats {
  numGroups: number;
  /** Groups with G ≥ 2 (or 'own' singles) whose scores are all equal; their advantages are 0. */
  zeroStdGroups: number;
  /** zeroStdGroups / numGroups (TRL: frac_reward_zero_std). */
  fracRewardZeroStd: number;
  /** (numGroups) μ per group as used (0 for verl-style groups of one). */
  groupMean: Float32Array;
  /** (numGroups) σ per group as used (1 for verl-style groups of one). */
  groupStd: Float32Array;
  /** σ_B over all B scores, only for stdNormalization 'batch'. */
  batchStd?: number;
}

export interface GroupAdvantageResult {
  /** (B) one advantage per sequence; broadcast to tokens with broadcastToTokens(). */
  advantages: Float32Array;
  stats: GroupAdvantageStats;
}

/**
 * Group layout checks for every group op: B ≥ 1 sequences, groupSize an integer dividing B, and
 * groupSize ≥ 2 unless groups of one are allowed.
 */
export function checkGroups(op: string, b: number, groupSize: number, allowSingles: boolean): void {
  if (b < 1) throw new OpInputError(op, 'scores', 'must hold at least one score (B ≥ 1), got 0');
  checkInt(op, 'groupSize', groupSize, 1, b);
  if (b % groupSize !== 0) {
    throw new OpInputError(
      op,
      'groupSize',
      `must divide B = ${b} (groups are contiguous), got ${groupSize}`,
    );
  }
  if (groupSize === 1 && !allowSingles) {
    throw new OpInputError(
      op,
      'groupSize',
      "must be ≥ 2 when singleSampleGroups is 'error' (TRL, OpenRLHF), got 1",
    );
  }
}

/** Merges flavor defaults with explicit options, checks their ranges, gives the core settings. */
export function resolveGroupAdvantageOptions(
  options: GroupAdvantageOptions = {},
): GroupCoreSettings {
  const op = 'groupAdvantages';
  const s = resolveFlavor(op, GROUP_ADVANTAGE_DEFAULTS, options);
  checkOneOf(op, 'stdNormalization', s.stdNormalization, STD_NORMALIZATIONS);
  checkOneOf(op, 'stdUnbiased', s.stdUnbiased, [true, false]);
  checkRange(op, 'stdEpsilon', s.stdEpsilon, 0, Infinity, { min: true });
  checkOneOf(op, 'singleSampleGroups', s.singleSampleGroups, ['mean0-std1', 'error'] as const);
  return {
    estimator: 'grpo',
    stdNormalization: s.stdNormalization,
    stdUnbiased: s.stdUnbiased,
    stdEpsilon: s.stdEpsilon,
    singles: s.singleSampleGroups === 'error' ? 'error' : 'mean0',
  };
}

/** RLOO's options as core settings (σ is computed only for the zero-std count; ε is unused). */
export function resolveRlooOptions(options: RlooOptions = {}): GroupCoreSettings {
  const op = 'rlooAdvantages';
  const s = resolveFlavor(op, RLOO_DEFAULTS, options);
  checkOneOf(op, 'singleSampleGroups', s.singleSampleGroups, ['baseline0', 'error'] as const);
  return {
    estimator: 'rloo',
    stdNormalization: 'none',
    stdUnbiased: true,
    stdEpsilon: 1,
    singles: s.singleSampleGroups === 'error' ? 'error' : 'mean0',
  };
}

/**
 * Checks shared by groupAdvantages() and groupAdvantagesGpu(): options, group layout, and finite
 * scores unless `scanFinite` is false (the GPU path, whose kernel reports non-finite values itself
 * with the same OpInputError class). Returns the core settings.
 */
export function checkGroupAdvantagesInput(
  scores: Float32Array,
  groupSize: number,
  options: GroupAdvantageOptions = {},
  scanFinite = true,
): GroupCoreSettings {
  const core = resolveGroupAdvantageOptions(options);
  checkGroups('groupAdvantages', scores.length, groupSize, core.singles !== 'error');
  if (scanFinite) checkFinite('groupAdvantages', 'scores', scores);
  return core;
}

/** Checks shared by rlooAdvantages() and rlooAdvantagesGpu() (see checkGroupAdvantagesInput). */
export function checkRlooInput(
  scores: Float32Array,
  groupSize: number,
  options: RlooOptions = {},
  scanFinite = true,
): GroupCoreSettings {
  const core = resolveRlooOptions(options);
  checkGroups('rlooAdvantages', scores.length, groupSize, core.singles !== 'error');
  if (scanFinite) checkFinite('rlooAdvantages', 'scores', scores);
  return core;
}

/** The shared computation; inputs must already be checked. */
export function groupAdvantagesCore(
  scores: Float32Array,
  groupSize: number,
  settings: GroupCoreSettings,
): GroupAdvantageResult {
  const g = groupSize;
  const numGroups = scores.length / g;
  const advantages = new Float32Array(scores.length);
  const groupMean = new Float32Array(numGroups);
  const groupStd = new Float32Array(numGroups);
  let batchStd: number | undefined;
  if (settings.stdNormalization === 'batch') {
    const all = maskedMoments(scores);
    batchStd = Math.sqrt(varianceFromMoments(all.count, all.m2, settings.stdUnbiased));
  }
  let zeroStdGroups = 0;
  for (let k = 0; k < numGroups; k++) {
    const group = scores.subarray(k * g, (k + 1) * g);
    let mean: number;
    let std: number;
    let zeroStd: boolean;
    // #region std-divisor
    if (g === 1 && settings.singles === 'mean0') {
      [mean, std, zeroStd] = [0, 1, false];
    } else {
      const moments = maskedMoments(group);
      mean = moments.mean;
      // m2 = 0 exactly iff all scores are equal (f32 inputs, f64 deviations cannot underflow).
      zeroStd = moments.m2 === 0;
      std = Math.sqrt(varianceFromMoments(g, moments.m2, settings.stdUnbiased));
    }
    groupMean[k] = mean;
    groupStd[k] = std;
    if (zeroStd) {
      zeroStdGroups += 1;
      continue; // advantages stay exactly 0
    }
    // #region group-advantages
    for (let i = 0; i < g; i++) {
      const s = group[i]!;
      let adv: number;
      if (settings.estimator === 'rloo') {
        adv = g === 1 ? s : ((s - mean) * g) / (g - 1);
      } else if (settings.stdNormalization === 'group') {
        adv = (s - mean) / (std + settings.stdEpsilon);
      } else if (settings.stdNormalization === 'batch') {
        adv = (s - mean) / (batchStd! + settings.stdEpsilon);
      } else {
        adv = s - mean;
      }
      advantages[k * g + i] = adv;
    }
    // #endregion group-advantages
    // #endregion std-divisor
  }
  const stats: GroupAdvantageStats = {
    numGroups,
    zeroStdGroups,
    fracRewardZeroStd: zeroStdGroups / numGroups,
    groupMean,
    groupStd,
  };
  if (batchStd !== undefined) stats.batchStd = batchStd;
  return { advantages, stats };
}

/** GRPO / Dr. GRPO / TRL scale_rewards advantages: scores (B) → advantages (B) and stats. */
export function groupAdvantages(
  scores: Float32Array,
  groupSize: number,
  options: GroupAdvantageOptions = {},
): GroupAdvantageResult {
  return groupAdvantagesCore(
    scores,
    groupSize,
    checkGroupAdvantagesInput(scores, groupSize, options),
  );
}

/** RLOO (leave-one-out baseline) advantages: scores (B) → advantages (B) and stats. */
export function rlooAdvantages(
  scores: Float32Array,
  groupSize: number,
  options: RlooOptions = {},
): GroupAdvantageResult {
  return groupAdvantagesCore(scores, groupSize, checkRlooInput(scores, groupSize, options));
}
