/**
 * Bandits: one-step episodes, the first environments of the policy-gradient lessons.
 *
 * - KArmedBandit — the k-armed testbed of Sutton & Barto (2nd ed., §2.3): arm a pays a reward drawn
 *   from N(q*(a), σ²), σ = 1 by default; the true values q*(a) are given, or drawn once per
 *   problem from N(qStarMean, 1) (qStarMean = 0 in §2.3, +4 in the baseline experiment of Fig. 2.5).
 * - ContextualBandit — a small set of contexts (S&B §2.9, "associative search"): each episode
 *   shows a context c drawn uniformly (the observation), and arm a pays N(μ(c, a), σ²).
 *
 * Every episode is a single pull: reset() → obs, step(a) → reward with terminated = true. The step
 * info carries what regret metrics need: `regret` = max_b q*(b) − q*(a) (the expected regret of the
 * pull, "pseudo-regret", which does not depend on the reward noise) and `optimal` (a is a best arm).
 *
 * Seeds: the problem (q* or μ when drawn) comes from the `seed` option; the reward noise and the
 * contexts come from the stream that reset(seed) re-seeds (seed 0 until the first seeded reset).
 * The two streams are decorrelated by hashing the problem seed.
 */
import { checkInt, checkRange } from '../ops/validate';
import { OpInputError } from '../ops/errors';
import { fmix32 } from '../util/counter-rng';
import { gaussian, seededRandom } from '../util/random';
import { EnvError, type Env, type Info, type Space, type StepResult } from './types';

/** Mixed into the problem seed so the q* draws and reset(seed)'s noise stream differ. */
const PROBLEM_SEED_SALT = 0x0b4d17;

/** Index of the largest value; ties go to the lowest index (as numpy's argmax). */
function argmax(values: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

function checkFiniteList(op: string, field: string, values: readonly number[]): void {
  values.forEach((v, i) => {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new OpInputError(op, field, `must be finite, but index ${i} is ${v}`);
    }
  });
}

export interface KArmedBanditOptions {
  /** Number of arms k, an integer in [1, 1000]. Default 10 (S&B's testbed); ignored if qStar given. */
  arms?: number;
  /** The true arm values q*(a) (finite). Default: drawn from N(qStarMean, 1) with `seed`. */
  qStar?: readonly number[];
  /** Mean of the q* draws, finite. Default 0 (S&B §2.3); S&B Fig. 2.5 uses +4. */
  qStarMean?: number;
  /** Standard deviation σ of every arm's reward noise, in [0, 1000]. Default 1. */
  rewardStd?: number;
  /** Seed of the problem (the q* draws), an integer in [0, 2³² − 1]. Default 0. */
  seed?: number;
}

export class KArmedBandit implements Env<number, number> {
  readonly id: string;
  /** One state: every observation is 0. */
  readonly observationSpace: Space = { kind: 'discrete', n: 1 };
  readonly actionSpace: Space;
  /** The true values q*(a). (arms) */
  readonly qStar: Float64Array;
  /** argmax_a q*(a) (lowest index on ties). */
  readonly optimalArm: number;
  readonly rewardStd: number;
  private random = seededRandom(0);
  /** Steps taken in the current episode (0 or 1); null before the first reset. */
  private steps: number | null = null;

  constructor(options: KArmedBanditOptions = {}) {
    const op = 'KArmedBandit';
    const seed = options.seed ?? 0;
    checkInt(op, 'seed', seed, 0, 2 ** 32 - 1);
    const rewardStd = options.rewardStd ?? 1;
    checkRange(op, 'rewardStd', rewardStd, 0, 1000);
    const qStarMean = options.qStarMean ?? 0;
    checkRange(op, 'qStarMean', qStarMean, -Infinity, Infinity);
    if (options.qStar !== undefined) {
      checkInt(op, 'qStar.length', options.qStar.length, 1, 1000);
      checkFiniteList(op, 'qStar', options.qStar);
      this.qStar = Float64Array.from(options.qStar);
    } else {
      const arms = options.arms ?? 10;
      checkInt(op, 'arms', arms, 1, 1000);
      const problem = seededRandom(fmix32((seed ^ PROBLEM_SEED_SALT) >>> 0));
      this.qStar = new Float64Array(arms);
      for (let a = 0; a < arms; a++) this.qStar[a] = qStarMean + gaussian(problem);
    }
    this.rewardStd = rewardStd;
    this.optimalArm = argmax(this.qStar);
    this.actionSpace = { kind: 'discrete', n: this.qStar.length };
    this.id = `KArmedBandit-${this.qStar.length}`;
  }

  reset(seed?: number): { obs: number; info: Info } {
    if (seed !== undefined) {
      checkInt(this.id, 'seed', seed, 0, 2 ** 32 - 1);
      this.random = seededRandom(seed);
    }
    this.steps = 0;
    return { obs: 0, info: {} };
  }

  step(action: number): StepResult<number> {
    checkStep(this.id, this.steps, action, this.qStar.length);
    this.steps = 1;
    const q = this.qStar[action]!;
    const reward = q + this.rewardStd * gaussian(this.random);
    const regret = this.qStar[this.optimalArm]! - q;
    return {
      obs: 0,
      reward,
      terminated: true,
      truncated: false,
      info: { regret, optimal: regret === 0 },
    };
  }
}

export interface ContextualBanditOptions {
  /** Number of contexts, an integer in [1, 1000]. Default 3; ignored if `means` is given. */
  contexts?: number;
  /** Number of arms, an integer in [1, 1000]. Default 3; ignored if `means` is given. */
  arms?: number;
  /**
   * The mean reward table μ(c, a): one row per context, all rows the same length (finite).
   * Default: drawn from N(0, 1) with `seed`.
   */
  means?: readonly (readonly number[])[];
  /** Standard deviation σ of the reward noise, in [0, 1000]. Default 1. */
  rewardStd?: number;
  /** Seed of the problem (the μ draws), an integer in [0, 2³² − 1]. Default 0. */
  seed?: number;
}

export class ContextualBandit implements Env<number, number> {
  readonly id: string;
  /** The observation is the context index. */
  readonly observationSpace: Space;
  readonly actionSpace: Space;
  readonly contexts: number;
  readonly arms: number;
  /** μ: (contexts, arms) row-major. */
  readonly means: Float64Array;
  readonly rewardStd: number;
  private random = seededRandom(0);
  private context = 0;
  private steps: number | null = null;

  constructor(options: ContextualBanditOptions = {}) {
    const op = 'ContextualBandit';
    const seed = options.seed ?? 0;
    checkInt(op, 'seed', seed, 0, 2 ** 32 - 1);
    const rewardStd = options.rewardStd ?? 1;
    checkRange(op, 'rewardStd', rewardStd, 0, 1000);
    if (options.means !== undefined) {
      const rows = options.means;
      checkInt(op, 'means.length', rows.length, 1, 1000);
      const arms = rows[0]!.length;
      checkInt(op, 'means[0].length', arms, 1, 1000);
      this.means = new Float64Array(rows.length * arms);
      rows.forEach((row, c) => {
        if (row.length !== arms) {
          throw new OpInputError(op, `means[${c}]`, `must have ${arms} arms, got ${row.length}`);
        }
        checkFiniteList(op, `means[${c}]`, row);
        this.means.set(row, c * arms);
      });
      this.contexts = rows.length;
      this.arms = arms;
    } else {
      this.contexts = options.contexts ?? 3;
      this.arms = options.arms ?? 3;
      checkInt(op, 'contexts', this.contexts, 1, 1000);
      checkInt(op, 'arms', this.arms, 1, 1000);
      const problem = seededRandom(fmix32((seed ^ PROBLEM_SEED_SALT) >>> 0));
      this.means = new Float64Array(this.contexts * this.arms);
      for (let i = 0; i < this.means.length; i++) this.means[i] = gaussian(problem);
    }
    this.rewardStd = rewardStd;
    this.observationSpace = { kind: 'discrete', n: this.contexts };
    this.actionSpace = { kind: 'discrete', n: this.arms };
    this.id = `ContextualBandit-${this.contexts}x${this.arms}`;
  }

  /** argmax_a μ(c, a) (lowest index on ties). */
  optimalArm(context: number): number {
    checkInt(this.id, 'context', context, 0, this.contexts - 1);
    return argmax(this.row(context));
  }

  reset(seed?: number): { obs: number; info: Info } {
    if (seed !== undefined) {
      checkInt(this.id, 'seed', seed, 0, 2 ** 32 - 1);
      this.random = seededRandom(seed);
    }
    // u ∈ [0, 1) → c ∈ {0, …, contexts − 1}, each with probability 1/contexts.
    this.context = Math.floor(this.random() * this.contexts);
    this.steps = 0;
    return { obs: this.context, info: {} };
  }

  step(action: number): StepResult<number> {
    checkStep(this.id, this.steps, action, this.arms);
    this.steps = 1;
    const row = this.row(this.context);
    const mean = row[action]!;
    const reward = mean + this.rewardStd * gaussian(this.random);
    const regret = row[argmax(row)]! - mean;
    return {
      obs: this.context,
      reward,
      terminated: true,
      truncated: false,
      info: { regret, optimal: regret === 0 },
    };
  }

  private row(context: number): Float64Array {
    return this.means.subarray(context * this.arms, (context + 1) * this.arms);
  }
}

/** Shared step checks: reset first, one pull per episode, an arm index in range. */
function checkStep(id: string, steps: number | null, action: number, arms: number): void {
  if (steps === null) throw new EnvError(id, 0, 'step() before reset(); call reset() first');
  if (steps > 0) {
    throw new EnvError(id, steps, 'the episode ended (one pull per episode); call reset()');
  }
  if (!Number.isInteger(action) || action < 0 || action >= arms) {
    throw new EnvError(id, steps, `action must be an integer in [0, ${arms - 1}], got ${action}`);
  }
}
