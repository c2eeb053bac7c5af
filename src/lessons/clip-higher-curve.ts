/**
 * Clip-higher at work on one rare, right answer, for the lesson plot. A policy over a four-token
 * vocabulary for one prompt (its logits are the parameters) is trained by the real CPU ops:
 *
 *   - every update draws a group of G answers in which the rare token appears once and is the only
 *     right one; the other G − 1 answers are the common token (reward 0). The two remaining tokens
 *     are never drawn. This is an update in which exploration paid off;
 *   - groupAdvantages gives the rare answer A > 0 and the common ones A < 0 (GRPO, verl defaults);
 *   - μ optimizer steps on that batch (TRL num_iterations, verl ppo_epochs), each one
 *     tokenLogprobs → policyLoss (PPO clip, token-mean) → tokenLogprobsBackward → adamwStep, with
 *     the old log-probs fixed at the start of the update, and the AdamW moments kept across
 *     updates as a trainer keeps them.
 *
 * Within an update the upper clip stops rewarding the rare token once its ratio passes
 * 1 + ε_high, so one update can raise its probability to about π_old·(1 + ε_high) and the growth
 * compounds over updates: ×1.2 or ×1.28 a time. AdamW's momentum carries it somewhat past the bound,
 * and the common token's falling probability lifts it a little; the plot shows both, because it
 * is the real optimizer. With μ = 1 the ratio is 1 at the only step, the clip never acts, and
 * every ε_high gives the same run.
 *
 * Shapes: logits (V) = (4); a batch is (G, 1) — G one-token answers to the same prompt.
 */
import { adamwStep } from '../ops/nn/adamw';
import { groupAdvantages } from '../ops/group-advantages';
import { policyLoss } from '../ops/policy-loss';
import { tokenLogprobs, tokenLogprobsBackward } from '../ops/token-logprobs';

/** Token ids of the plot's vocabulary. */
export const RARE_TOKEN = 0;
export const COMMON_TOKEN = 1;
const VOCAB = 4;
/** How the mass the rare token does not hold is split over common, unsampled, unsampled. */
const OTHER_SHARES = [0.8, 0.1, 0.1] as const;

export interface ClipHigherOptions {
  /** π(rare) before the first update, in [0.001, 0.5]. */
  initialProbability: number;
  /** ε_high: the upper clip is 1 + ε_high (verl clip_ratio_high, TRL epsilon_high), in (0, 10]. */
  clipHigh: number;
  /** ε_low: the lower clip is 1 − ε_low (verl clip_ratio_low, TRL epsilon), in (0, 1). Default 0.2. */
  clipLow?: number;
  /** μ: optimizer steps on each batch (TRL num_iterations, verl ppo_epochs), an integer in [1, 16]. */
  iterations: number;
  /** AdamW's learning rate on the logits, in (0, 1]: each step moves a logit by about lr. */
  lr: number;
  /** Updates to run, an integer in [1, 200]. */
  updates: number;
  /** G, the group size (verl rollout.n, TRL num_generations), an integer in [2, 64]. Default 8. */
  groupSize?: number;
}

export interface ClipHigherStep {
  /** 1-based update and optimizer step within it (1…μ). */
  update: number;
  iteration: number;
  /** π(rare) after this step. */
  probability: number;
  /** π(common) after this step: the wrong answer the group drew G − 1 times. */
  common: number;
  /** π(rare) / π_old(rare) after this step. */
  ratio: number;
  /** Whether the clip stopped the rare token's gradient at this step (policyLoss gave it 0). */
  clipped: boolean;
}

export interface ClipHigherRun {
  /** One entry per optimizer step: updates · μ of them. */
  steps: ClipHigherStep[];
  /** (updates + 1) π(rare) at the start of every update, then after the last one. */
  perUpdate: number[];
  /** The first update after which π(rare) ≥ 0.5, or null if none did. */
  updatesToHalf: number | null;
}

function checkOptions(options: ClipHigherOptions): Required<ClipHigherOptions> {
  const resolved = { clipLow: 0.2, groupSize: 8, ...options };
  const inRange = (field: string, value: number, low: number, high: number, whole = false) => {
    const ok = Number.isFinite(value) && value >= low && value <= high;
    if (!ok || (whole && !Number.isInteger(value))) {
      const kind = whole ? 'an integer' : 'a number';
      throw new RangeError(
        `clipHigherRun: ${field} must be ${kind} in [${low}, ${high}], got ${value}`,
      );
    }
  };
  inRange('initialProbability', resolved.initialProbability, 0.001, 0.5);
  inRange('iterations', resolved.iterations, 1, 16, true);
  inRange('updates', resolved.updates, 1, 200, true);
  inRange('groupSize', resolved.groupSize, 2, 64, true);
  if (!(resolved.lr > 0 && resolved.lr <= 1)) {
    throw new RangeError(`clipHigherRun: lr must be a number in (0, 1], got ${resolved.lr}`);
  }
  // clipLow and clipHigh are checked by policyLoss, which names them and their ranges.
  return resolved;
}

/** The four-token policy's logits with π(rare) = p and the rest split by OTHER_SHARES. */
export function initialLogits(p: number): Float32Array {
  return Float32Array.from([p, ...OTHER_SHARES.map((share) => share * (1 - p))], Math.log);
}

/** π(token) under `logits` (V), in float64. */
export function probabilityOf(logits: Float32Array, token: number): number {
  const max = Math.max(...logits);
  let sum = 0;
  for (const z of logits) sum += Math.exp(z - max);
  return Math.exp(logits[token]! - max) / sum;
}

/** Trains the four-token policy for `updates` updates; see the file comment. */
export function clipHigherRun(options: ClipHigherOptions): ClipHigherRun {
  const o = checkOptions(options);
  const G = o.groupSize;
  const targets = Int32Array.from({ length: G }, (_, i) => (i === 0 ? RARE_TOKEN : COMMON_TOKEN));
  const scores = Float32Array.from(targets, (t) => (t === RARE_TOKEN ? 1 : 0));
  const { advantages } = groupAdvantages(scores, G);
  const mask = new Float32Array(G).fill(1);
  const lossOptions = {
    lossType: 'ppo',
    clipLow: o.clipLow,
    clipHigh: o.clipHigh,
    dualClip: null,
    logRatioClamp: null,
    aggregation: 'token-mean',
  } as const;

  const logits = initialLogits(o.initialProbability);
  const m = new Float32Array(VOCAB);
  const v = new Float32Array(VOCAB);
  const grads = new Float32Array(VOCAB);
  /** (G, V): the prompt's logits repeated for each answer of the group. */
  const batchLogits = () => {
    const rows = new Float32Array(G * VOCAB);
    for (let i = 0; i < G; i++) rows.set(logits, i * VOCAB);
    return rows;
  };
  const logpOf = (rows: Float32Array) =>
    tokenLogprobs(rows, targets, G, VOCAB, { withEntropy: false }).logp;

  const steps: ClipHigherStep[] = [];
  const perUpdate = [probabilityOf(logits, RARE_TOKEN)];
  let updatesToHalf: number | null = null;
  let adamStep = 0;
  for (let update = 1; update <= o.updates; update++) {
    const oldLogp = logpOf(batchLogits());
    const oldProbability = probabilityOf(logits, RARE_TOKEN);
    for (let iteration = 1; iteration <= o.iterations; iteration++) {
      const rows = batchLogits();
      const loss = policyLoss(logpOf(rows), oldLogp, advantages, mask, G, 1, lossOptions);
      const dLogits = tokenLogprobsBackward(rows, targets, loss.gradLogp, undefined, G, VOCAB);
      // The G rows share one set of logits: its gradient is the sum over the rows.
      grads.fill(0);
      for (let i = 0; i < G; i++) {
        for (let k = 0; k < VOCAB; k++) grads[k] = grads[k]! + dLogits[i * VOCAB + k]!;
      }
      adamStep += 1;
      adamwStep(logits, grads, m, v, adamStep, { lr: o.lr, weightDecay: 0 });
      const probability = probabilityOf(logits, RARE_TOKEN);
      steps.push({
        update,
        iteration,
        probability,
        common: probabilityOf(logits, COMMON_TOKEN),
        ratio: probability / oldProbability,
        clipped: loss.gradLogp[0] === 0,
      });
    }
    const after = probabilityOf(logits, RARE_TOKEN);
    perUpdate.push(after);
    if (updatesToHalf === null && after >= 0.5) updatesToHalf = update;
  }
  return { steps, perUpdate, updatesToHalf };
}
