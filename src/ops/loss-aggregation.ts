/**
 * Loss aggregation: per-token losses (B, T) + a 0/1 mask (B, T) → one scalar; the CPU reference
 * for kernels/loss_aggregation_{rows,reduce,scale}.wgsl. Follows verl v0.9.0's
 * `agg_loss(loss_agg_mode=…)` and TRL v1.9.0's `loss_type` (src/ops/flavor-releases.ts); with ℓ
 * the token loss, m the mask, B = rows, T = cols, R = the rows that count (below):
 *
 *   token-mean               Σ m·ℓ / Σ m                          verl 'token-mean'; TRL 'bnpo',
 *                                                                 'dapo' (within one process)
 *   seq-mean-token-mean      mean over rows with Σ_t m > 0 of     verl 'seq-mean-token-mean';
 *                            Σ_t m·ℓ / Σ_t m                      TRL 'grpo'
 *   seq-mean-token-sum       (1/R) Σ_b Σ_t m·ℓ                    verl
 *   seq-mean-token-sum-norm  Σ_b Σ_t m·ℓ / (R · lossScaleFactor)  verl (Dr. GRPO with the
 *                                                                 longest response as factor)
 *   dr-grpo                  Σ m·ℓ / (B · maxCompletionLength)    TRL 'dr_grpo'
 *
 * Rows whose mask is all zero: seq-mean-token-mean leaves them out of the mean (verl's 0/0 row
 * mean would be NaN; TRL's 'grpo' clamps Σ_t m at 1 and so averages them in as 0 over all B rows —
 * the two agree whenever every row has a token). For the two seq-mean-token-sum modes R is set by
 * `emptyRows`: 'exclude' (the verl flavor, verl's agg_loss since February 2026 / v0.7.1 when it
 * counts the rows itself) leaves them out of R; 'count' (the trl and openrlhf flavors, and older
 * verl) counts all B rows. dr-grpo always divides by B, as TRL does. An all-zero mask gives loss 0,
 * weights 0 and `emptyMask: true` in every mode, never NaN.
 *
 * Changed in verl v0.7.1 (February 2026): seq-mean-token-sum-norm was Σ m·ℓ / lossScaleFactor,
 * with no division by the rows; it now divides by R as well, as here. verl's trainer passes the
 * mini-batch's row count as the global batch size, which counts every row ('count').
 *
 * Every mode is linear in ℓ, so the loss is Σ w·ℓ with `weights` w = ∂loss/∂ℓ; the GPU kernel
 * and the policy / value losses use these weights to backpropagate through the aggregation.
 */
import { resolveFlavor, type Flavor, type FlavorOption } from './flavor';
import {
  checkBinary,
  checkFinite,
  checkInt,
  checkMatrix,
  checkOneOf,
  checkRange,
} from './validate';

const OP = 'aggregateLoss';

export const LOSS_AGG_MODES = [
  'token-mean',
  'seq-mean-token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-sum-norm',
  'dr-grpo',
] as const;
export type LossAggMode = (typeof LOSS_AGG_MODES)[number];

/** Whether rows without a trained token count in R (the seq-mean-token-sum modes). */
export const EMPTY_ROW_MODES = ['exclude', 'count'] as const;
export type EmptyRows = (typeof EMPTY_ROW_MODES)[number];

const EMPTY_ROW_DEFAULTS: Record<Flavor, { emptyRows: EmptyRows }> = {
  verl: { emptyRows: 'exclude' },
  trl: { emptyRows: 'count' },
  openrlhf: { emptyRows: 'count' },
};

export interface LossAggOptions extends FlavorOption {
  /**
   * verl: loss_agg_mode ('token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' |
   * 'seq-mean-token-sum-norm'); TRL: loss_type ('grpo' = 'seq-mean-token-mean', 'bnpo' / 'dapo' =
   * 'token-mean' within one process, 'dr_grpo' = 'dr-grpo').
   */
  mode: LossAggMode;
  /**
   * verl: loss_scale_factor — 'seq-mean-token-sum-norm' divides by R · this (a constant, so the
   * loss scale does not depend on response lengths). Finite, > 0. Default T (= cols). Other modes
   * ignore it.
   */
  lossScaleFactor?: number;
  /**
   * TRL: max_completion_length — 'dr-grpo' divides by B · this. Integer ≥ 1. Default T (= cols).
   * Other modes ignore it.
   */
  maxCompletionLength?: number;
  /**
   * 'exclude' | 'count': whether rows with an empty mask count in R for 'seq-mean-token-sum' and
   * 'seq-mean-token-sum-norm'. Default by flavor: verl 'exclude', trl and openrlhf 'count'.
   */
  emptyRows?: EmptyRows;
}

export interface AggregatedLoss {
  /** The aggregated scalar (0 for an all-zero mask). */
  loss: number;
  /** (B, T): ∂loss/∂tokenLoss; 0 at masked positions. */
  weights: Float32Array;
  /** Σ m: the number of unmasked tokens. */
  tokens: number;
  /** True when every mask element is 0. */
  emptyMask: boolean;
}

/** Option checks shared by the CPU reference, the GPU wrapper and the ops that aggregate. */
export function checkLossAggOptions(op: string, options: LossAggOptions): void {
  checkOneOf<string>(op, 'mode', options.mode, LOSS_AGG_MODES);
  if (options.emptyRows !== undefined) {
    checkOneOf<string>(op, 'emptyRows', options.emptyRows, EMPTY_ROW_MODES);
  }
  resolveEmptyRows(op, options);
  if (options.lossScaleFactor !== undefined) {
    checkRange(op, 'lossScaleFactor', options.lossScaleFactor, 0, Infinity, { min: true });
  }
  if (options.maxCompletionLength !== undefined) {
    checkInt(op, 'maxCompletionLength', options.maxCompletionLength, 1, 2 ** 31 - 1);
  }
}

/** The emptyRows in force: the explicit option, else the flavor's default (verl: 'exclude'). */
export function resolveEmptyRows(op: string, options: LossAggOptions): EmptyRows {
  return resolveFlavor(op, EMPTY_ROW_DEFAULTS, {
    flavor: options.flavor,
    emptyRows: options.emptyRows,
  }).emptyRows;
}

/**
 * Shape, value and option checks shared with the GPU wrapper. The GPU path passes
 * `{ finite: false }`: its kernel checks finiteness itself and reports through the input status.
 */
export function checkAggregateLossInput(
  tokenLoss: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: LossAggOptions,
  { finite = true }: { finite?: boolean } = {},
): void {
  checkMatrix(OP, 'tokenLoss', tokenLoss, rows, cols);
  checkMatrix(OP, 'mask', mask, rows, cols);
  checkLossAggOptions(OP, options);
  if (finite) checkFinite(OP, 'tokenLoss', tokenLoss, cols);
  checkBinary(OP, 'mask', mask, cols);
}

/**
 * The per-row scale of each mode: loss = Σ_b scale[b] · Σ_t m·ℓ, so weights[b, t] = m·scale[b].
 * `rowTokens[b]` = Σ_t m for row b. Returns all zeros for an all-zero mask.
 */
export function aggregationRowScales(
  rowTokens: ArrayLike<number>,
  rows: number,
  cols: number,
  options: LossAggOptions,
): Float64Array {
  const scale = new Float64Array(rows);
  let tokens = 0;
  let nonEmptyRows = 0;
  for (let r = 0; r < rows; r++) {
    tokens += rowTokens[r]!;
    if (rowTokens[r]! > 0) nonEmptyRows++;
  }
  if (tokens === 0) return scale;
  // R of the seq-mean-token-sum modes; an excluded row gets scale 0 (its weights are 0 anyway).
  const exclude = resolveEmptyRows(OP, options) === 'exclude';
  const counted = exclude ? nonEmptyRows : rows;
  // #region row-scale
  for (let r = 0; r < rows; r++) {
    const n = rowTokens[r]!;
    switch (options.mode) {
      case 'token-mean':
        scale[r] = 1 / tokens;
        break;
      case 'seq-mean-token-mean':
        scale[r] = n > 0 ? 1 / (nonEmptyRows * n) : 0;
        break;
      case 'seq-mean-token-sum':
        scale[r] = n > 0 || !exclude ? 1 / counted : 0;
        break;
      case 'seq-mean-token-sum-norm':
        scale[r] = n > 0 || !exclude ? 1 / (counted * (options.lossScaleFactor ?? cols)) : 0;
        break;
      case 'dr-grpo':
        scale[r] = 1 / (rows * (options.maxCompletionLength ?? cols));
        break;
    }
  }
  return scale;
  // #endregion row-scale
}

/** Aggregates per-token losses (B, T) under a 0/1 mask (B, T) into one scalar and its weights. */
export function aggregateLoss(
  tokenLoss: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: LossAggOptions,
): AggregatedLoss {
  checkAggregateLossInput(tokenLoss, mask, rows, cols, options);
  return aggregateChecked(tokenLoss, mask, rows, cols, options);
}

/**
 * aggregateLoss without the input checks, for ops that have already checked the same tensors
 * (the policy and value losses aggregate a token loss they computed themselves).
 */
export function aggregateChecked(
  tokenLoss: ArrayLike<number>,
  mask: ArrayLike<number>,
  rows: number,
  cols: number,
  options: LossAggOptions,
): AggregatedLoss {
  const rowTokens = new Float64Array(rows);
  const rowSums = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let n = 0;
    let s = 0;
    for (let c = 0; c < cols; c++) {
      const m = mask[r * cols + c]!;
      n += m;
      s += m * tokenLoss[r * cols + c]!;
    }
    rowTokens[r] = n;
    rowSums[r] = s;
  }
  const scale = aggregationRowScales(rowTokens, rows, cols, options);
  const weights = new Float32Array(rows * cols);
  let loss = 0;
  let tokens = 0;
  for (let r = 0; r < rows; r++) {
    loss += scale[r]! * rowSums[r]!;
    tokens += rowTokens[r]!;
    for (let c = 0; c < cols; c++) weights[r * cols + c] = mask[r * cols + c]! * scale[r]!;
  }
  return { loss, weights, tokens, emptyMask: tokens === 0 };
}
