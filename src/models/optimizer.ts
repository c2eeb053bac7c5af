/**
 * One optimizer step over a model's flat parameters: global gradient norm, clipping, AdamW on the
 * weight-decayed range and on the rest (decay 0), as PyTorch's clip_grad_norm_ + AdamW with two
 * param groups. A non-finite gradient norm skips the update: parameters and moments stay as they
 * were and the step count does not advance (the trainer records it as an event).
 *
 * The state `stats` is [gradNorm, clipScale, applied (1/0), step], on the GPU a 4-float buffer
 * written by the grad-norm kernel and read by the AdamW kernel within one command encoder.
 */
import { adamwStep, checkAdamWOptions, type AdamWOptions } from '../ops/nn/adamw';
import type { Floats } from '../ops/nn/floats';
import { clipScale, GRAD_STATS, gradNorm } from '../ops/nn/grad-norm';
import { OpInputError } from '../ops/errors';
import { checkRange } from '../ops/validate';
import type { ParamLayout } from './param-layout';

export interface OptimizerConfig extends AdamWOptions {
  /**
   * Clip the global gradient norm to this value (verl actor.optim.clip_grad, TRL/HF max_grad_norm,
   * OpenRLHF max_norm; all default 1.0). 0 turns clipping off. ≥ 0.
   */
  maxGradNorm: number;
}

export function checkOptimizerConfig(config: OptimizerConfig): void {
  checkAdamWOptions(config);
  checkRange('optimizer', 'maxGradNorm', config.maxGradNorm, 0, Infinity, { highOpen: true });
}

/** Indices into the stats vector (shared with the grad-norm and AdamW kernels). */
const STATS = GRAD_STATS;
export const STATS_LENGTH = GRAD_STATS.length;

export interface OptimizerStats {
  gradNorm: number;
  clipScale: number;
  applied: boolean;
  step: number;
}

export function readStats(stats: ArrayLike<number>): OptimizerStats {
  return {
    gradNorm: stats[STATS.gradNorm]!,
    clipScale: stats[STATS.clipScale]!,
    applied: stats[STATS.applied] === 1,
    step: stats[STATS.step]!,
  };
}

/** AdamW moments and stats for a CPU model. */
export class CpuOptimizerState<T extends Floats> {
  readonly m: T;
  readonly v: T;
  readonly stats = new Float64Array(STATS_LENGTH);

  constructor(like: T) {
    this.m = like.slice().fill(0) as T;
    this.v = like.slice().fill(0) as T;
  }
}

/**
 * A CPU model's AdamW state from a snapshot of m, v (`total` floats each) and the stats; throws
 * naming `what`'s field when a length is wrong.
 */
export function cpuOptimizerFrom<T extends Floats>(
  params: T,
  snapshot: { m: ArrayLike<number>; v: ArrayLike<number>; stats: ArrayLike<number> },
  what: string,
): CpuOptimizerState<T> {
  for (const [key, want] of [
    ['m', params.length],
    ['v', params.length],
    ['stats', STATS_LENGTH],
  ] as const) {
    const got = snapshot[key].length;
    if (got !== want) throw new OpInputError(what, key, `must have ${want} floats, got ${got}`);
  }
  const state = new CpuOptimizerState(params);
  state.m.set(snapshot.m);
  state.v.set(snapshot.v);
  state.stats.set(snapshot.stats);
  return state;
}

/**
 * The record of a step skipped before its backward because the logits were not finite: the same
 * outcome as a non-finite gradient norm on the GPU (no update, the step not counted).
 */
export function skippedStep(stats: ArrayLike<number>): OptimizerStats & { loss: number } {
  return { step: stats[STATS.step]!, loss: NaN, gradNorm: NaN, clipScale: 0, applied: false };
}

/** The CPU twin of encodeOptimizerStep(): same order, same skip rule. */
export function optimizerStepCpu<T extends Floats>(
  layout: ParamLayout,
  params: T,
  grads: T,
  state: CpuOptimizerState<T>,
  config: OptimizerConfig,
): OptimizerStats {
  const norm = gradNorm(grads);
  const stats = state.stats;
  stats[STATS.gradNorm] = norm;
  if (!Number.isFinite(norm)) {
    stats[STATS.clipScale] = 0;
    stats[STATS.applied] = 0;
    return readStats(stats);
  }
  const scale = clipScale(norm, config.maxGradNorm);
  stats[STATS.clipScale] = scale;
  stats[STATS.applied] = 1;
  const step = stats[STATS.step]! + 1;
  stats[STATS.step] = step;
  for (const [range, weightDecay] of [
    [layout.decayRange, config.weightDecay],
    [layout.noDecayRange, 0],
  ] as const) {
    if (range.count === 0) continue;
    const part = (x: T) => x.subarray(range.offset, range.offset + range.count) as T;
    adamwStep(
      part(params),
      part(grads),
      part(state.m),
      part(state.v),
      step,
      { ...config, weightDecay },
      scale,
    );
  }
  return readStats(stats);
}
