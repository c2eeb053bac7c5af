/**
 * DPO on preference pairs the policy makes itself: a success (chosen) against a failure (rejected)
 * of the same prompt, both sampled from the current policy and judged by the task's verifier. The
 * loss is DPO's offline objective (Rafailov et al. 2023; TRL DPOTrainer, OpenRLHF DPO): no
 * reward, no advantage, only "make the chosen completion more likely than the rejected one,
 * relative to the frozen reference". Re-sampling the pairs every update, with a verifier as judge,
 * is how iterative / online DPO and Iterative RPO (Pang et al. 2024) use it on reasoning tasks;
 * GRPO learns from the very same samples through advantages instead, which makes the two easy to
 * put side by side.
 *
 * One update, top to bottom:
 *   1. sample P prompts and generate K completions for each (temperature);
 *   2. verify each completion: success = full score (≥ 1), failure otherwise;
 *   3. pair successes with failures within each prompt, each completion used at most once
 *      (min(#successes, #failures) pairs per prompt); prompts whose K samples all succeed or all
 *      fail give no pair — with no pair at all the update is skipped;
 *   4. score the 2·pairs rows (chosen rows, then rejected rows) with the reference and the policy
 *      at temperature 1 (π is the model's own distribution, as in TRL's DPOTrainer; the sampling
 *      temperature only decides which completions become pairs); sequence log-prob = Σ over the
 *      completion's tokens (incl. <eos>) of the token log-probs — for 'ipo' their mean, as TRL
 *      computes it;
 *   5. dpoLoss → ∂loss/∂(sequence log-prob) per row → per token by the chain rule through the sum
 *      (mask · grad, divided by the token count for 'ipo') → backward → clip → AdamW;
 *   6. metrics named as TRL names them.
 *
 * Metrics (docs/metrics.md):
 *   reward/mean, reward/success_rate     verifier scores of all P·K samples (equal for 0/1 tasks)
 *   pairs                                preference pairs formed this update
 *   response_length/mean                 generated tokens per completion
 *   loss                                 the DPO (or IPO) loss, mean over pairs
 *   rewards/chosen, rewards/rejected     mean β·(log π − log π_ref) of the chosen / rejected rows
 *   rewards/accuracies                   fraction of pairs whose chosen reward is higher (strict)
 *   rewards/margins                      mean of rewards/chosen − rewards/rejected
 *   logps/chosen, logps/rejected         mean sequence log-prob under the policy
 *   actor/grad_norm                      before clipping
 *   actor/lr, perf/generated_tokens, perf/tokens_per_s
 * An update without a pair reports only the sampling metrics (reward/*, pairs = 0, response
 * length, throughput) and is recorded as a skipped update.
 */
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { Tokenizer } from '../models/tokenizer-api';
import { dpoLoss } from '../ops/dpo-loss';
import { counterHash } from '../util/counter-rng';
import { isAgentTask } from '../agents/agent-task';
import { OpInputError } from '../ops/errors';
import { promptTokens } from '../agents/prompt-tokens';
import { completionText } from './evaluate';
import { DPO_CONFIG_SPEC, type DpoConfig } from './dpo-config';
import { createLmRun } from './lm-run';
import type { Metrics, Trainer } from './trainer';

export { DEFAULT_DPO_CONFIG, DPO_CONFIG_SPEC, type DpoConfig } from './dpo-config';

export interface DpoSetup {
  /** The policy being trained. */
  policy: LanguageModel;
  /** The frozen reference π_ref (usually the starting weights); never updated here. */
  reference: LanguageModel;
  tokenizer: Tokenizer;
  task: TokenTask;
  seed: number;
}

/** One preference pair of the last update, for the lab's inspector. */
export interface DpoPair {
  prompt: string;
  chosen: string;
  rejected: string;
  /** β·(log π − log π_ref) of each completion, before this update's step. */
  rewardChosen: number;
  rewardRejected: number;
}

export interface DpoTrainer extends Trainer<DpoConfig> {
  /** The pairs the last update trained on (empty when it formed none). */
  readonly lastPairs: readonly DpoPair[];
}

/** A verifier score counts as a success when it is full (≥ 1), as reward/success_rate counts. */
const SUCCESS = 1;

export function createDpoTrainer(setup: DpoSetup, initial: DpoConfig): DpoTrainer {
  if (isAgentTask(setup.task)) {
    throw new OpInputError(
      'createDpoTrainer',
      'task',
      `'${setup.task.name}' is an agent task; DPO pairs single-turn completions, so train it ` +
        'with GRPO or one of its settings (Dr. GRPO, DAPO, RLOO, REINFORCE++)',
    );
  }
  const run = createLmRun({
    algorithm: 'dpo',
    spec: DPO_CONFIG_SPEC,
    initial,
    seeds: { prompts: setup.seed },
  });
  const { control, streams } = run;
  const { policy, reference, tokenizer, task } = setup;
  let lastPairs: DpoPair[] = [];

  async function update(): Promise<Metrics> {
    const cfg = control.beginUpdate();
    control.phase('generating');
    const started = performance.now();
    const K = cfg.samplesPerPrompt;
    const samples: TokenTaskSample[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const sample = task.sample(streams.get('prompts'));
      for (let k = 0; k < K; k++) samples.push(sample);
    }
    const B = samples.length;

    // 1. Generate K completions of each prompt, distinct random draws.
    const prompts = samples.map((s) => promptTokens(tokenizer, s));
    const longestPrompt = Math.max(...prompts.map((p) => p.length));
    const maxLength = Math.min(policy.spec.context, longestPrompt + cfg.maxNewTokens);
    const generation = await policy.generate({
      prompts,
      maxLength,
      maxNewTokens: Math.min(cfg.maxNewTokens, maxLength - 1),
      stopTokens: tokenizer.stopIds,
      padToken: tokenizer.pad,
      sampling: { temperature: cfg.temperature },
      seed: counterHash(setup.seed, control.step, 0),
    });

    // 2. Verify.
    const scores = new Float64Array(B);
    const completions: string[] = [];
    for (let b = 0; b < B; b++) {
      completions.push(completionText(tokenizer, generation, b));
      scores[b] = task.verify(samples[b]!, completions[b]!);
    }
    control.phase('updating');
    const generated = generation.mask.reduce((s, m) => s + m, 0);
    const meanReward = scores.reduce((s, r) => s + r, 0) / B;
    const sampling: Metrics = {
      'reward/mean': meanReward,
      'reward/success_rate': scores.reduce((s, r) => s + (r >= SUCCESS ? 1 : 0), 0) / B,
      'response_length/mean': generated / B,
    };

    // 3. Pairs: the i-th success of a prompt with its i-th failure (rows of the generation).
    // #region pairs
    const chosenRows: number[] = [];
    const rejectedRows: number[] = [];
    for (let p = 0; p < cfg.promptsPerUpdate; p++) {
      const wins: number[] = [];
      const losses: number[] = [];
      for (let k = 0; k < K; k++) (scores[p * K + k]! >= SUCCESS ? wins : losses).push(p * K + k);
      for (let i = 0; i < Math.min(wins.length, losses.length); i++) {
        chosenRows.push(wins[i]!);
        rejectedRows.push(losses[i]!);
      }
    }
    // #endregion pairs
    const P = chosenRows.length;
    const finish = (metrics: Metrics, skipped?: string): Metrics => {
      control.endUpdate(skipped ? { skipped } : {});
      const seconds = (performance.now() - started) / 1000;
      return {
        ...sampling,
        pairs: P,
        ...metrics,
        'perf/generated_tokens': generated,
        'perf/tokens_per_s': generated / seconds,
      };
    };
    if (P === 0) {
      lastPairs = [];
      return finish({}, 'no preference pair');
    }

    // 4. Pack 2P rows — chosen rows 0 … P−1, rejected rows P … 2P−1 — as (inputs, targets, mask),
    //    each (2P, T) with T = L − 1: inputs are positions 0 … L−2, targets 1 … L−1.
    const L = generation.maxLength;
    const T = L - 1;
    const rows = [...chosenRows, ...rejectedRows];
    const tokens = new Int32Array(2 * P * T);
    const targets = new Int32Array(2 * P * T);
    const mask = new Float32Array(2 * P * T);
    rows.forEach((b, r) => {
      tokens.set(generation.tokens.subarray(b * L, b * L + T), r * T);
      targets.set(generation.tokens.subarray(b * L + 1, (b + 1) * L), r * T);
      mask.set(generation.mask.subarray(b * L + 1, (b + 1) * L), r * T);
    });
    // Tokens per row: 'ipo' averages the log-probs over them (TRL); 'sigmoid' sums (weight 1).
    const rowWeight = new Float64Array(2 * P).fill(1);
    if (cfg.lossType === 'ipo') {
      for (let r = 0; r < 2 * P; r++) {
        let count = 0;
        for (let t = 0; t < T; t++) count += mask[r * T + t]!;
        rowWeight[r] = 1 / Math.max(count, 1);
      }
    }
    const sequenceLogp = (logp: Float32Array): Float32Array => {
      const out = new Float32Array(2 * P); // (2P)
      for (let r = 0; r < 2 * P; r++) {
        let sum = 0; // float64
        for (let t = 0; t < T; t++) sum += mask[r * T + t]! * logp[r * T + t]!;
        out[r] = sum * rowWeight[r]!;
      }
      return out;
    };

    // The reference first: the policy's scoreTokens must be the last before its backward.
    const refScores = await reference.scoreTokens(tokens, targets, 2 * P, T, 1);
    const { logp } = await policy.scoreTokens(tokens, targets, 2 * P, T, 1);
    if (!logp.every(Number.isFinite) || !refScores.logp.every(Number.isFinite)) {
      lastPairs = [];
      return finish({}, 'non-finite log-probs');
    }
    const seqPolicy = sequenceLogp(logp);
    const seqRef = sequenceLogp(refScores.logp);

    // #region loss-and-grad
    // 5. The loss on sequence log-probs, then per token: ∂loss/∂logp[r, t] = mask · w_r · g_r.
    const dpo = dpoLoss(
      seqPolicy.subarray(0, P),
      seqPolicy.subarray(P),
      seqRef.subarray(0, P),
      seqRef.subarray(P),
      { beta: cfg.beta, lossType: cfg.lossType, labelSmoothing: cfg.labelSmoothing },
    );
    const dLogp = new Float32Array(2 * P * T); // (2P, T)
    for (let r = 0; r < 2 * P; r++) {
      const g = (r < P ? dpo.gradChosen[r]! : dpo.gradRejected[r - P]!) * rowWeight[r]!;
      for (let t = 0; t < T; t++) dLogp[r * T + t] = mask[r * T + t]! * g;
    }
    // #endregion loss-and-grad
    await policy.backwardFromLogp(dLogp, undefined, {
      lr: cfg.lr,
      weightDecay: cfg.weightDecay,
      maxGradNorm: cfg.maxGradNorm,
    });
    const steps = await policy.takeMetrics();
    const last = steps[steps.length - 1];

    lastPairs = chosenRows.map((b, i) => ({
      prompt: samples[b]!.prompt,
      chosen: completions[b]!,
      rejected: completions[rejectedRows[i]!]!,
      rewardChosen: dpo.rewardsChosen[i]!,
      rewardRejected: dpo.rewardsRejected[i]!,
    }));

    // 6. Metrics.
    const mean = (xs: ArrayLike<number>) => {
      let s = 0;
      for (let i = 0; i < xs.length; i++) s += xs[i]!;
      return s / xs.length;
    };
    return finish(
      {
        loss: dpo.loss,
        'rewards/chosen': mean(dpo.rewardsChosen),
        'rewards/rejected': mean(dpo.rewardsRejected),
        'rewards/accuracies': dpo.accuracy,
        'rewards/margins': dpo.margin,
        'logps/chosen': mean(seqPolicy.subarray(0, P)),
        'logps/rejected': mean(seqPolicy.subarray(P)),
        'actor/grad_norm': last?.gradNorm ?? NaN,
        'actor/lr': cfg.lr,
      },
      last && !last.applied ? 'non-finite gradient norm' : undefined,
    );
  }

  return run.expose<DpoTrainer>({
    get lastPairs() {
      return lastPairs;
    },
    update,
  });
}
