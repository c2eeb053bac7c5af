/**
 * Policy-gradient losses, the CPU reference for kernels/policy_loss.wgsl (+ the aggregation
 * kernels). Inputs are (B, T) row-major: logp (current policy), oldLogp (behaviour policy),
 * advantages (per token; broadcast a per-sequence advantage over its row), mask (0/1).
 * With Δ = logp − oldLogp and A the advantage:
 *
 * 'ppo' — verl compute_policy_loss_vanilla, OpenRLHF PolicyLoss, TRL GRPO (token level):
 *   lr = clamp(Δ, ±logRatioClamp) (verl clamps at ±20; TRL / OpenRLHF do not), ratio = exp(lr)
 *   r1 = min(ratio, delta) (TRL two-sided clipping, only when delta is set), l1 = −A·r1
 *   l2 = −A·clamp(ratio, 1 − clipLow, 1 + clipHigh)
 *   lClip = max(l1, l2)                       (pessimistic: never below the unclipped l1)
 *   dual clip c (verl clip_ratio_c, OpenRLHF dual_clip): ℓ = A < 0 ? min(lClip, −A·c) : lClip
 *   clip-higher (DAPO) is just clipHigh ≠ clipLow, e.g. 0.2 / 0.28.
 *
 * 'gspo' — sequence-level ratio s_b = exp(Σ_t m·Δ / max(Σ_t m, 1)), then the clipped surrogate
 *   above with ratio = s_b on every token of row b (no dual clip, no logRatioClamp):
 *   gspoGradient 'token' (verl compute_policy_loss_gspo): per-token log ratio
 *     logp − sg(logp) + sg(mean Δ), clamped at most 10; its value is log s_b but its gradient is
 *     token-local: ∂ratio_t/∂logp_t = ratio_t.
 *   gspoGradient 'sequence' (TRL importance_sampling_level='sequence', OpenRLHF 'gspo'): s_b is not
 *     detached, so ∂s_b/∂logp_t = s_b·m_t / max(Σm, 1): every token's gradient sums the row.
 *
 * 'reinforce' — ℓ = −A·logp (plain REINFORCE / verl 'gpg'); gradient −A; the clip stats are 0.
 *
 * The token losses are aggregated by src/ops/loss-aggregation.ts; gradLogp is ∂loss/∂logp of the
 * aggregated scalar. Autograd conventions at kinks (ties of max/min, clamp boundaries) follow the
 * branch taken here; tests stay away from the kinks.
 */
import { type FlavorOption, type Flavor, resolveFlavor } from './flavor';
import { type LossAggMode, aggregationRowScales, checkLossAggOptions } from './loss-aggregation';
import { checkBinary, checkFinite, checkMatrix, checkOneOf, checkRange } from './validate';

const OP = 'policyLoss';

export const POLICY_LOSS_TYPES = ['ppo', 'gspo', 'reinforce'] as const;
export type PolicyLossType = (typeof POLICY_LOSS_TYPES)[number];

export const GSPO_GRADIENTS = ['token', 'sequence'] as const;
export type GspoGradient = (typeof GSPO_GRADIENTS)[number];

/** verl clamps GSPO's per-token log ratio at most 10 (compute_policy_loss_gspo); fixed there too. */
export const GSPO_LOG_RATIO_MAX = 10;

export interface PolicyLossOptions extends FlavorOption {
  /** verl: policy_loss.loss_mode ('vanilla' = 'ppo', 'gspo', 'gpg' = 'reinforce'); OpenRLHF:
   *  policy_loss_type ('ppo' | 'gspo'); TRL: importance_sampling_level ('token' = 'ppo',
   *  'sequence' = 'gspo'). Default 'ppo'. */
  lossType?: PolicyLossType;
  /** verl: clip_ratio_low (falls back to clip_ratio); TRL: epsilon; OpenRLHF: clip_eps_low.
   *  Lower clip 1 − clipLow; in (0, 1). Default 0.2 (GSPO paper: 3e-4). */
  clipLow?: number;
  /** verl: clip_ratio_high; TRL: epsilon_high (defaults to epsilon); OpenRLHF: clip_eps_high.
   *  Upper clip 1 + clipHigh; in (0, 10]. Default 0.2 (DAPO: 0.28; GSPO paper: 4e-4). */
  clipHigh?: number;
  /** verl: clip_ratio_c; OpenRLHF: dual_clip — for A < 0 the loss is capped at −A·c. Must be
   *  > 1, or null for off. 'ppo' only. Default 3 (verl), null (TRL, OpenRLHF). */
  dualClip?: number | null;
  /** verl: the fixed ±20 clamp of log_prob − old_log_prob before exp(). Must be > 0, or null for
   *  none. 'ppo' only. Default 20 (verl), null (TRL, OpenRLHF). */
  logRatioClamp?: number | null;
  /** TRL: delta — two-sided clipping: the unclipped ratio r1 is capped at delta. Must be > 1
   *  (TRL recommends > 1 + epsilon_high), or null for off. Default null. */
  delta?: number | null;
  /** How the GSPO sequence ratio is differentiated (see the file comment). Default 'token' (verl),
   *  'sequence' (TRL, OpenRLHF). */
  gspoGradient?: GspoGradient;
  /** verl: loss_agg_mode; TRL: loss_type. Default 'token-mean'; for 'gspo', verl and OpenRLHF
   *  force 'seq-mean-token-mean'. TRL's default loss_type has moved from 'grpo' to 'bnpo' to
   *  'dapo'; 'bnpo' and 'dapo' are 'token-mean' within one process, hence 'token-mean' here. */
  aggregation?: LossAggMode;
  /** verl: loss_scale_factor, for 'seq-mean-token-sum-norm'. Default T. */
  lossScaleFactor?: number;
  /** TRL: max_completion_length, for 'dr-grpo'. Default T. */
  maxCompletionLength?: number;
}

/** Options with every default filled in. */
export interface ResolvedPolicyLossOptions {
  flavor: Flavor;
  lossType: PolicyLossType;
  clipLow: number;
  clipHigh: number;
  dualClip: number | null;
  logRatioClamp: number | null;
  delta: number | null;
  gspoGradient: GspoGradient;
  aggregation: LossAggMode;
  lossScaleFactor: number | undefined;
  maxCompletionLength: number | undefined;
}

type FlavorDefaults = Omit<ResolvedPolicyLossOptions, 'flavor' | 'aggregation'> & {
  aggregation: LossAggMode | undefined;
};

const DEFAULTS: Record<Flavor, FlavorDefaults> = {
  verl: {
    lossType: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.2,
    dualClip: 3,
    logRatioClamp: 20,
    delta: null,
    gspoGradient: 'token',
    aggregation: undefined,
    lossScaleFactor: undefined,
    maxCompletionLength: undefined,
  },
  trl: {
    lossType: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.2,
    dualClip: null,
    logRatioClamp: null,
    delta: null,
    gspoGradient: 'sequence',
    aggregation: undefined,
    lossScaleFactor: undefined,
    maxCompletionLength: undefined,
  },
  openrlhf: {
    lossType: 'ppo',
    clipLow: 0.2,
    clipHigh: 0.2,
    dualClip: null,
    logRatioClamp: null,
    delta: null,
    gspoGradient: 'sequence',
    aggregation: undefined,
    lossScaleFactor: undefined,
    maxCompletionLength: undefined,
  },
};

/** Aggregation when none is given: verl and OpenRLHF aggregate GSPO per sequence. */
const DEFAULT_AGGREGATION: Record<Flavor, Record<PolicyLossType, LossAggMode>> = {
  verl: { ppo: 'token-mean', gspo: 'seq-mean-token-mean', reinforce: 'token-mean' },
  trl: { ppo: 'token-mean', gspo: 'token-mean', reinforce: 'token-mean' },
  openrlhf: { ppo: 'token-mean', gspo: 'seq-mean-token-mean', reinforce: 'token-mean' },
};

/** Statistics, in the order of the GPU stats buffer (after the loss). */
export const POLICY_LOSS_STATS = [
  'pg_clipfrac',
  'pg_clipfrac_lower',
  'ppo_kl',
  'clip_ratio/low_mean',
  'clip_ratio/high_mean',
  'clip_ratio/region_mean',
  'approx_kl_half_sq',
] as const;
export type PolicyLossStat = (typeof POLICY_LOSS_STATS)[number];

/**
 * Masked means over unmasked tokens (0 for an empty mask):
 *   pg_clipfrac (verl)            1[l2 > l1]
 *   pg_clipfrac_lower (verl)      1[lClip > −A·c ∧ A < 0] (dual-clip hits; 0 without dual clip)
 *   ppo_kl (verl)                 −lr = oldLogp − logp, after the ±logRatioClamp clamp as in verl
 *   clip_ratio/low_mean (TRL)     1[r1 < 1 − clipLow ∧ A < 0]
 *   clip_ratio/high_mean (TRL)    1[r1 > 1 + clipHigh ∧ A > 0]
 *   clip_ratio/region_mean (TRL)  1[low ∨ high]
 *   approx_kl_half_sq             ½·Δ²
 */
export type PolicyLossStats = Record<PolicyLossStat, number>;

export interface PolicyLossResult {
  /** The aggregated loss. */
  loss: number;
  /** (B, T) per-token loss ℓ; 0 at masked positions. */
  tokenLoss: Float32Array;
  /** (B, T) ∂loss/∂logp after aggregation; 0 at masked positions. */
  gradLogp: Float32Array;
  stats: PolicyLossStats;
  /** Σ mask. */
  tokens: number;
  emptyMask: boolean;
}

/** Fills in flavor defaults and checks every option's range. */
export function resolvePolicyLossOptions(
  options: PolicyLossOptions = {},
): ResolvedPolicyLossOptions {
  const merged = resolveFlavor<FlavorDefaults>(OP, DEFAULTS, options);
  const resolved: ResolvedPolicyLossOptions = {
    ...merged,
    aggregation: merged.aggregation ?? DEFAULT_AGGREGATION[merged.flavor][merged.lossType],
  };
  checkOneOf<string>(OP, 'lossType', resolved.lossType, POLICY_LOSS_TYPES);
  checkOneOf<string>(OP, 'gspoGradient', resolved.gspoGradient, GSPO_GRADIENTS);
  checkRange(OP, 'clipLow', resolved.clipLow, 0, 1, { min: true, max: true });
  checkRange(OP, 'clipHigh', resolved.clipHigh, 0, 10, { min: true });
  const aboveMin = { min: true };
  if (resolved.dualClip !== null) {
    checkRange(OP, 'dualClip', resolved.dualClip, 1, Infinity, aboveMin);
  }
  if (resolved.logRatioClamp !== null) {
    checkRange(OP, 'logRatioClamp', resolved.logRatioClamp, 0, Infinity, aboveMin);
  }
  if (resolved.delta !== null) checkRange(OP, 'delta', resolved.delta, 1, Infinity, aboveMin);
  checkLossAggOptions(OP, {
    mode: resolved.aggregation,
    lossScaleFactor: resolved.lossScaleFactor,
    maxCompletionLength: resolved.maxCompletionLength,
  });
  return resolved;
}

/**
 * Shape, value and option checks shared with the GPU wrapper. The GPU path passes
 * `{ finite: false }`: its kernel checks finiteness itself and reports through the input status.
 */
export function checkPolicyLossInput(
  logp: Float32Array,
  oldLogp: Float32Array,
  advantages: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: PolicyLossOptions = {},
  { finite = true }: { finite?: boolean } = {},
): ResolvedPolicyLossOptions {
  checkMatrix(OP, 'logp', logp, rows, cols);
  checkMatrix(OP, 'oldLogp', oldLogp, rows, cols);
  checkMatrix(OP, 'advantages', advantages, rows, cols);
  checkMatrix(OP, 'mask', mask, rows, cols);
  const resolved = resolvePolicyLossOptions(options);
  if (finite) {
    checkFinite(OP, 'logp', logp, cols);
    checkFinite(OP, 'oldLogp', oldLogp, cols);
    checkFinite(OP, 'advantages', advantages, cols);
  }
  checkBinary(OP, 'mask', mask, cols);
  return resolved;
}

/** One token of the clipped surrogate, as a function of its importance ratio. */
interface ClippedToken {
  loss: number;
  /** ∂loss/∂ratio. */
  dRatio: number;
  clipped: boolean; // l2 > l1
  dualHit: boolean; // lClip > −A·c ∧ A < 0
  low: boolean; // r1 < 1 − clipLow ∧ A < 0
  high: boolean; // r1 > 1 + clipHigh ∧ A > 0
}

// #region clipped-surrogate
function clippedSurrogate(
  ratio: number,
  a: number,
  o: ResolvedPolicyLossOptions,
  dualClip: number | null,
): ClippedToken {
  const capped = o.delta !== null && ratio > o.delta;
  const r1 = capped ? o.delta! : ratio;
  const lo = 1 - o.clipLow;
  const hi = 1 + o.clipHigh;
  const r2 = Math.min(Math.max(ratio, lo), hi);
  const l1 = -a * r1;
  const l2 = -a * r2;
  // max(l1, l2); at a tie both branches have the same value and, inside the clip range, slope.
  const takeL1 = l1 >= l2;
  let loss = takeL1 ? l1 : l2;
  let dRatio = takeL1 ? (capped ? 0 : -a) : ratio >= lo && ratio <= hi ? -a : 0;
  let dualHit = false;
  if (dualClip !== null && a < 0) {
    const l3 = -a * dualClip;
    dualHit = loss > l3;
    if (dualHit) {
      loss = l3;
      dRatio = 0;
    }
  }
  return {
    loss,
    dRatio,
    clipped: l2 > l1,
    dualHit,
    low: r1 < lo && a < 0,
    high: r1 > hi && a > 0,
  };
}
// #endregion clipped-surrogate

/**
 * How the clipped surrogate treated one token (for inspectors): `clipped` when the clipped term
 * was taken (its gradient is zero outside the range), `dualHit` when dual clip capped it.
 * Token-level PPO only; `options` as policyLoss takes them.
 */
export function tokenClipState(
  ratio: number,
  advantage: number,
  options: PolicyLossOptions = {},
): { clipped: boolean; dualHit: boolean } {
  const o = resolvePolicyLossOptions(options);
  const t = clippedSurrogate(ratio, advantage, o, o.dualClip);
  return { clipped: t.clipped, dualHit: t.dualHit };
}

/** Policy loss of (B, T) inputs: aggregated loss, per-token loss, ∂loss/∂logp and statistics. */
export function policyLoss(
  logp: Float32Array,
  oldLogp: Float32Array,
  advantages: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: PolicyLossOptions = {},
): PolicyLossResult {
  const o = checkPolicyLossInput(logp, oldLogp, advantages, mask, rows, cols, options);
  const n = rows * cols;
  const loss64 = new Float64Array(n); // ℓ, 0 where masked
  const local = new Float64Array(n); // ∂ℓ/∂logp (token-local), or ∂ℓ/∂ratio for 'sequence' GSPO
  const rowTokens = new Float64Array(rows);
  const rowRatio = new Float64Array(rows); // GSPO s_b
  const sums = new Float64Array(POLICY_LOSS_STATS.length);
  const seqGradient = o.lossType === 'gspo' && o.gspoGradient === 'sequence';

  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    let tokens = 0;
    let deltaSum = 0;
    for (let c = 0; c < cols; c++) {
      const m = mask[base + c]!;
      tokens += m;
      deltaSum += m * (logp[base + c]! - oldLogp[base + c]!);
    }
    rowTokens[r] = tokens;
    const seqLogRatio = deltaSum / Math.max(tokens, 1);
    // verl's clamp (max 10) belongs to its detached, token-local form; TRL / OpenRLHF have none.
    const gspoLogRatio = seqGradient ? seqLogRatio : Math.min(seqLogRatio, GSPO_LOG_RATIO_MAX);
    const gspoGate = seqGradient || seqLogRatio <= GSPO_LOG_RATIO_MAX ? 1 : 0;
    rowRatio[r] = Math.exp(gspoLogRatio);

    for (let c = 0; c < cols; c++) {
      const i = base + c;
      const m = mask[i]!;
      if (m === 0) continue;
      const a = advantages[i]!;
      const delta = logp[i]! - oldLogp[i]!;
      let lr = delta;
      if (o.lossType === 'reinforce') {
        loss64[i] = -a * logp[i]!;
        local[i] = -a;
      } else if (o.lossType === 'ppo') {
        const bound = o.logRatioClamp;
        let gate = 1;
        if (bound !== null && Math.abs(delta) > bound) {
          lr = Math.sign(delta) * bound;
          gate = 0;
        }
        const ratio = Math.exp(lr);
        const t = clippedSurrogate(ratio, a, o, o.dualClip);
        loss64[i] = t.loss;
        local[i] = t.dRatio * ratio * gate;
        tally(sums, t);
      } else {
        const ratio = rowRatio[r]!;
        const t = clippedSurrogate(ratio, a, o, null);
        loss64[i] = t.loss;
        local[i] = seqGradient ? t.dRatio : t.dRatio * ratio * gspoGate;
        tally(sums, t);
      }
      add(sums, 2, -lr); // ppo_kl
      add(sums, 6, 0.5 * delta * delta); // approx_kl_half_sq
    }
  }

  const aggregation = {
    mode: o.aggregation,
    lossScaleFactor: o.lossScaleFactor,
    maxCompletionLength: o.maxCompletionLength,
    // Which rows count in R of the seq-mean-token-sum modes follows the loss's flavor.
    flavor: o.flavor,
  };
  const scale = aggregationRowScales(rowTokens, rows, cols, aggregation);
  const tokenLoss = new Float32Array(n);
  const gradLogp = new Float32Array(n);
  let loss = 0;
  let tokens = 0;
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    const s = scale[r]!;
    tokens += rowTokens[r]!;
    // 'sequence' GSPO: ∂loss/∂logp_t = m_t·s_b/max(n_b, 1) · Σ_u w_u·∂ℓ_u/∂s_b, with w_u = m_u·scale_b.
    let rowCoupling = 0;
    if (seqGradient) {
      let g = 0;
      for (let c = 0; c < cols; c++) g += mask[base + c]! * local[base + c]!;
      rowCoupling = (s * g * rowRatio[r]!) / Math.max(rowTokens[r]!, 1);
    }
    for (let c = 0; c < cols; c++) {
      const i = base + c;
      tokenLoss[i] = loss64[i]!;
      loss += s * loss64[i]!;
      gradLogp[i] = seqGradient ? (mask[i] === 0 ? 0 : rowCoupling) : s * local[i]!;
    }
  }
  const stats = Object.fromEntries(
    POLICY_LOSS_STATS.map((name, k) => [name, tokens > 0 ? sums[k]! / tokens : 0]),
  ) as PolicyLossStats;
  return { loss, tokenLoss, gradLogp, stats, tokens, emptyMask: tokens === 0 };
}

function add(sums: Float64Array, k: number, value: number): void {
  sums[k] = sums[k]! + value;
}

/** Counts a token's clip events into the statistic numerators (POLICY_LOSS_STATS order). */
function tally(sums: Float64Array, t: ClippedToken): void {
  add(sums, 0, Number(t.clipped));
  add(sums, 1, Number(t.dualHit));
  add(sums, 3, Number(t.low));
  add(sums, 4, Number(t.high));
  add(sums, 5, Number(t.low || t.high));
}
