/**
 * The policy steps of one token-RL update (src/rl/lm-pipeline.ts, step 5): epochs × minibatches
 * over the batch, each one policy step (src/rl/policy-step.ts: the clipped policy loss, + KL in
 * the loss, − entropy bonus, + the critic's value loss, + the retained task's ptx term; backward,
 * clip, AdamW), stopped early once the KL to the behaviour policy passes targetKl. GRPO takes μ
 * passes over the whole batch; PPO shuffled minibatches.
 */
import type { TokenTask } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { Tokenizer } from '../models/tokenizer-api';
import type { TokenRlConfig } from './lm-pipeline';
import { policyStep, type PolicyStepLosses, type PolicyStepRequest } from './policy-step';
import { mixPtx } from './retained-task';

/** The (B, T) arrays a minibatch takes its rows of. */
export interface RowArrays {
  tokens: Int32Array;
  targets: Int32Array;
  mask: Float32Array;
  advantages: Float32Array;
  /** The behaviour policy's; absent: the first pass over the whole batch gives them. */
  oldLogp?: Float32Array;
  /** The reference's, for the KL in the loss. */
  refLogp?: Float32Array;
  oldValues?: Float32Array;
  returns?: Float32Array;
}

export interface PassesRequest {
  policy: LanguageModel;
  cfg: TokenRlConfig;
  /** T: positions per row. */
  seq: number;
  arrays: RowArrays;
  loss: Pick<PolicyStepRequest, 'policyLoss' | 'aggregation'>;
  /** The value loss's weight and clip range (a critic only). */
  critic?: { coef: number; cliprangeValue: number };
  epochs: number;
  minibatches: number;
  /** Draws each epoch's minibatch order; absent: one minibatch, the batch in its own order. */
  shuffle?: () => number;
  /** Stop after an epoch whose mean ppo_kl exceeds it (0 or absent: never). */
  targetKl?: number;
  /** Where each step's ptx demonstrations come from (none without a retained task). */
  ptx: { retained: TokenTask | undefined; tokenizer: Tokenizer; seed: number; step: number };
  /** Keep the last step's log-probs (the inspector's ratios). */
  keepLogp: boolean;
}

export interface PassesResult {
  /** The last step that ran: its loss terms. */
  lastLosses?: PolicyStepLosses;
  /** (B, T) the behaviour policy's log-probs, given or from the first pass. */
  oldLogp?: Float32Array;
  /** (B, T) the last step's log-probs (keepLogp). */
  lastLogp?: Float32Array;
  /** Why a step was skipped; the passes stop there. */
  skipped?: string;
  epochsRun: number;
}

/**
 * The policy loss's options and, from them, how every other term is aggregated. verl and TRL
 * normalise the token-sum modes by the response width (max_response_length /
 * max_completion_length), not by the rows' full width, which also holds the prompt.
 */
export function lossOptions(
  cfg: TokenRlConfig,
  width: number,
): Pick<PolicyStepRequest, 'policyLoss' | 'aggregation'> {
  const policyLoss = {
    clipLow: cfg.clipLow,
    clipHigh: cfg.clipHigh,
    dualClip: (cfg.dualClip ?? 0) > 1 ? cfg.dualClip! : null,
    aggregation: cfg.lossAggregation,
    lossScaleFactor: width,
    maxCompletionLength: width,
  };
  const { aggregation: mode, lossScaleFactor, maxCompletionLength } = policyLoss;
  return { policyLoss, aggregation: { mode, lossScaleFactor, maxCompletionLength } };
}

export async function policyPasses(request: PassesRequest): Promise<PassesResult> {
  const { policy, cfg, seq: T, arrays: all, critic, epochs, minibatches, shuffle } = request;
  const B = all.mask.length / T;
  const perMinibatch = B / minibatches;
  if (shuffle && !all.oldLogp) {
    throw new Error('policyPasses: shuffled minibatches need the behaviour log-probs');
  }
  let oldLogp = all.oldLogp;
  let lastLosses: PolicyStepLosses | undefined;
  let lastLogp: Float32Array | undefined;
  let skipped: string | undefined;
  let epochsRun = 0;
  passes: for (let epoch = 0; epoch < epochs; epoch++) {
    const order = shuffle ? permutation(B, shuffle) : undefined;
    let klSum = 0;
    for (let mb = 0; mb < minibatches; mb++) {
      // Without a shuffle there is one minibatch, the whole batch, whose first pass is the
      // behaviour policy (ratio 1) when no old log-probs were scored: they come back from it.
      const part = order
        ? selectRows(order.slice(mb * perMinibatch, (mb + 1) * perMinibatch), T, all)
        : { ...all, ...(oldLogp ? { oldLogp } : {}) };
      const n = part.tokens.length / T;
      const { retained, tokenizer, seed, step: updateStep } = request.ptx;
      const ptx = mixPtx(
        retained,
        tokenizer,
        cfg,
        { tokens: part.tokens, targets: part.targets, rows: n, seq: T },
        { seed, step: updateStep, key: epoch * minibatches + mb },
      );
      const last = epoch === epochs - 1 && mb === minibatches - 1;
      const step = await policyStep(policy, {
        tokens: ptx?.tokens ?? part.tokens,
        targets: ptx?.targets ?? part.targets,
        rows: n,
        seq: T,
        temperature: cfg.temperature,
        mask: part.mask,
        advantages: part.advantages,
        ...(part.oldLogp ? { oldLogp: part.oldLogp } : {}),
        ...request.loss,
        ...(part.refLogp
          ? {
              kl: {
                refLogp: part.refLogp,
                coef: cfg.klCoef,
                options: { estimator: cfg.klEstimator },
              },
            }
          : {}),
        entropyCoef: cfg.entropyCoef,
        ...(critic && part.oldValues
          ? {
              value: {
                oldValues: part.oldValues,
                returns: part.returns!,
                coef: critic.coef,
                options: { cliprangeValue: critic.cliprangeValue },
              },
            }
          : {}),
        ...(ptx ? { ptx: { mask: ptx.mask, coef: cfg.ptxCoef } } : {}),
        optimizer: { lr: cfg.lr, weightDecay: cfg.weightDecay, maxGradNorm: cfg.maxGradNorm },
        ...(request.keepLogp ? { wantLogp: last } : {}),
      });
      if (!order) oldLogp ??= step.logp;
      if (step.logp && last) lastLogp = step.logp;
      if (step.skipped) {
        skipped = step.skipped;
        break passes;
      }
      lastLosses = step.losses!;
      klSum += lastLosses.pgStats.ppo_kl;
    }
    epochsRun += 1;
    const targetKl = request.targetKl ?? 0;
    if (targetKl > 0 && klSum / minibatches > targetKl) break;
  }
  return {
    ...(lastLosses ? { lastLosses } : {}),
    ...(oldLogp ? { oldLogp } : {}),
    ...(lastLogp ? { lastLogp } : {}),
    ...(skipped ? { skipped } : {}),
    epochsRun,
  };
}

/** A seeded Fisher–Yates shuffle of 0 … n−1. */
function permutation(n: number, random: () => number): number[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** The rows `picked` of every (B, T) array, in that order. */
function selectRows(picked: readonly number[], T: number, arrays: RowArrays): RowArrays {
  const take = <A extends Int32Array | Float32Array>(x: A): A => {
    const out = new (x.constructor as new (n: number) => A)(picked.length * T);
    picked.forEach((row, i) => out.set(x.subarray(row * T, (row + 1) * T), i * T));
    return out;
  };
  const out: RowArrays = {
    tokens: take(arrays.tokens),
    targets: take(arrays.targets),
    mask: take(arrays.mask),
    advantages: take(arrays.advantages),
  };
  for (const key of ['oldLogp', 'refLogp', 'oldValues', 'returns'] as const) {
    const x = arrays[key];
    if (x) out[key] = take(x);
  }
  return out;
}
