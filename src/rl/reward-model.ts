/**
 * A learned reward model, trained the way RLHF trains one (InstructGPT; TRL RewardTrainer;
 * OpenRLHF train_rm), then used as a reward by GRPO and PPO.
 *
 *   1. Comparison data: the starting policy answers P prompts K times each; a judge — here the
 *      task's full verifier standing in for human raters — prefers a right answer to a wrong one
 *      of the same prompt (min(#right, #wrong) pairs per prompt, as DPO pairs them). With
 *      `labelNoise` ε each pair's label is flipped with probability ε, as raters disagree.
 *   2. The model: the starting policy's transformer with a scalar head on its last hidden state
 *      (TRL: AutoModelForSequenceClassification with num_labels = 1). Its score of a completion is
 *      the head's output at the completion's last token (the closing <eos> when there is one).
 *   3. Training: the Bradley–Terry loss −log σ(r(x, y_w) − r(x, y_l)) on random minibatches of the
 *      pairs, AdamW; a fifth of the pairs is held out and never trained on.
 *   4. Normalization: only score differences were trained, so the scores are shifted and scaled
 *      to mean 0 and std 1 over the comparison data (OpenRLHF --normalize_reward).
 *
 * The RL run then adds rewardModelWeight · r(x, y) to each completion's reward. The verifier still
 * grades every completion (reward/strict_accuracy), so a chart shows the proxy and the true
 * objective side by side — the gap between them is reward-model over-optimization (Gao et al.
 * 2022).
 */
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import { DEFAULT_REWARD_CONFIG } from '../envs/token-tasks/rewards';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import { bradleyTerryLoss } from '../ops/bradley-terry';
import { OpInputError } from '../ops/errors';
import { counterHash } from '../util/counter-rng';
import { seededRandom } from '../util/random';
import { rollout, rolloutLength, type RolloutRow } from './token-rollout';
import { checkRewardModelConfig, type RewardModelConfig } from './reward-model-config';

// The settings' callers take them from here, with the model they configure.
export {
  checkRewardModelConfig,
  DEFAULT_REWARD_MODEL_CONFIG,
  REWARD_MODEL_CONFIG_SPEC,
  type RewardModelConfig,
} from './reward-model-config';

/** Anything that scores completions with one number each (the RL trainers see only this). */
export interface CompletionScorer {
  /** One score per row (normalized), from the row's tokens and generated-token mask. */
  score(rows: readonly Pick<RolloutRow, 'tokens' | 'mask'>[]): Promise<Float32Array>;
}

/** Refuses rewardModelWeight > 0 in a run that has no reward model to weigh. */
export function checkRewardModelWeight(
  config: { rewardModelWeight: number },
  rewardModel: CompletionScorer | undefined,
  scope: string,
): void {
  if (config.rewardModelWeight > 0 && !rewardModel) {
    throw new OpInputError(
      scope,
      'rewardModelWeight',
      `must be 0 in a run without a reward model (train one with the run's rewardModel settings), got ${config.rewardModelWeight}`,
    );
  }
}

/** The comparison data: rows (L tokens each) and pairs of row indices. */
export interface ComparisonData {
  rows: RolloutRow[];
  /** Indices into rows; `chosen` is what the (possibly noisy) label prefers. */
  pairs: { chosen: number; rejected: number; flipped: boolean }[];
}

/**
 * Samples the comparison data from `policy` (temperature 1) and pairs right with wrong answers.
 * Deterministic for a seed.
 */
export async function collectComparisons(
  policy: LanguageModel,
  tokenizer: CharTokenizer,
  task: TokenTask,
  config: RewardModelConfig,
  maxNewTokens: number,
  seed: number,
): Promise<ComparisonData> {
  checkRewardModelConfig(config);
  const promptRandom = seededRandom(counterHash(seed, 0, 1));
  const samples: TokenTaskSample[] = [];
  for (let p = 0; p < config.prompts; p++) {
    const sample = task.sample(promptRandom);
    for (let k = 0; k < config.samplesPerPrompt; k++) samples.push(sample);
  }
  const rows = await rollout({
    policy,
    tokenizer,
    task,
    rewards: DEFAULT_REWARD_CONFIG,
    samples,
    maxLength: rolloutLength(policy.spec.context, task, maxNewTokens, tokenizer),
    maxNewTokens,
    sampling: { temperature: 1, topK: 0, topP: 1 },
    seed: counterHash(seed, 0, 2),
  });
  const noise = seededRandom(counterHash(seed, 0, 3));
  const pairs: ComparisonData['pairs'] = [];
  const K = config.samplesPerPrompt;
  for (let p = 0; p < config.prompts; p++) {
    const right: number[] = [];
    const wrong: number[] = [];
    for (let k = p * K; k < (p + 1) * K; k++) {
      (rows[k]!.reward.strictlyVerified ? right : wrong).push(k);
    }
    for (let i = 0; i < Math.min(right.length, wrong.length); i++) {
      const flipped = noise() < config.labelNoise;
      pairs.push(
        flipped
          ? { chosen: wrong[i]!, rejected: right[i]!, flipped }
          : { chosen: right[i]!, rejected: wrong[i]!, flipped },
      );
    }
  }
  return { rows, pairs };
}

/** Where each row's score is read: its last generated token. (B) indices into (B·L). */
function lastTokenIndices(rows: readonly Pick<RolloutRow, 'tokens' | 'mask'>[], L: number) {
  return rows.map((row, b) => {
    const last = row.mask.lastIndexOf(1);
    if (last < 0) throw new OpInputError('rewardModel', `rows[${b}]`, 'has no generated token');
    return b * L + last;
  });
}

/** Raw head outputs at each row's last generated token, keeping the activations for a backward. */
async function rawScores(
  model: LanguageModel,
  rows: readonly Pick<RolloutRow, 'tokens' | 'mask'>[],
): Promise<{ scores: Float32Array; at: number[] }> {
  const B = rows.length;
  const L = rows[0]!.tokens.length;
  const tokens = new Int32Array(B * L);
  const targets = new Int32Array(B * L); // unused by the head; the next token keeps them valid
  rows.forEach((row, b) => {
    if (row.tokens.length !== L) {
      throw new OpInputError('rewardModel', `rows[${b}].tokens`, `must hold ${L} tokens`);
    }
    tokens.set(row.tokens, b * L);
    targets.set(row.tokens.subarray(1), b * L);
    targets[b * L + L - 1] = row.tokens[L - 1]!;
  });
  const { values } = await model.scoreTokens(tokens, targets, B, L, 1);
  if (!values) throw new Error('rewardModel: the model has no value head to score with');
  const at = lastTokenIndices(rows, L);
  return { scores: Float32Array.from(at, (i) => values[i]!), at };
}

export interface RewardModelReport {
  pairs: number;
  heldOutPairs: number;
  /** Bradley–Terry loss on the first and the last minibatch. */
  firstLoss: number;
  lastLoss: number;
  /** Held-out pairs ordered as the verifier orders them (label noise not applied); NaN if none. */
  heldOutAccuracy: number;
  /** Mean and std of the raw scores over the comparison data (what normalization removes). */
  mean: number;
  std: number;
}

/** A trained reward model: normalized scores of completions. */
export class RewardModel implements CompletionScorer {
  constructor(
    readonly model: LanguageModel,
    readonly mean: number,
    readonly std: number,
  ) {}

  async score(rows: readonly Pick<RolloutRow, 'tokens' | 'mask'>[]): Promise<Float32Array> {
    const { scores } = await rawScores(this.model, rows);
    return scores.map((s) => (s - this.mean) / this.std);
  }
}

/**
 * Trains `model` (a transformer with a value head, usually the starting policy's weights) on the
 * comparison data and returns it as a RewardModel with its normalization. `onStep(done, total)`
 * reports progress. Deterministic for a seed on one backend.
 */
export async function trainRewardModel(
  model: LanguageModel,
  data: ComparisonData,
  config: RewardModelConfig,
  seed: number,
  onStep: (done: number, total: number) => void | Promise<void> = () => {},
): Promise<{ rewardModel: RewardModel; report: RewardModelReport }> {
  checkRewardModelConfig(config);
  if (data.pairs.length < 2) {
    throw new OpInputError(
      'rewardModel',
      'pairs',
      `needs at least 2 right/wrong pairs, the starting policy gave ${data.pairs.length}: raise prompts or samplesPerPrompt, or start from a policy that is sometimes right`,
    );
  }
  const shuffle = seededRandom(counterHash(seed, 0, 4));
  const order = data.pairs.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(shuffle() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const heldOutCount = Math.floor(order.length / 5);
  const heldOut = order.slice(0, heldOutCount); // indices into data.pairs
  const train = order.slice(heldOutCount).map((i) => data.pairs[i]!);
  const optimizer = { lr: config.lr, weightDecay: 0, maxGradNorm: 1 };
  const batch = Math.min(config.pairsPerStep, train.length);
  let cursor = 0;
  let firstLoss = NaN;
  let lastLoss = NaN;
  // #region bradley-terry-step
  for (let step = 0; step < config.steps; step++) {
    const pairs = Array.from({ length: batch }, () => train[cursor++ % train.length]!);
    // Rows: the batch's chosen completions, then its rejected ones. (2·batch, L)
    const rows = [
      ...pairs.map((p) => data.rows[p.chosen]!),
      ...pairs.map((p) => data.rows[p.rejected]!),
    ];
    const { scores, at } = await rawScores(model, rows);
    const bt = bradleyTerryLoss(scores.subarray(0, batch), scores.subarray(batch));
    if (step === 0) firstLoss = bt.loss;
    lastLoss = bt.loss;
    const L = rows[0]!.tokens.length;
    const dValues = new Float32Array(rows.length * L);
    at.forEach((index, r) => {
      dValues[index] = r < batch ? bt.gradChosen[r]! : bt.gradRejected[r - batch]!;
    });
    await model.backwardFromLogp(new Float32Array(rows.length * L), undefined, optimizer, dValues);
    await model.takeMetrics();
    await onStep(step + 1, config.steps);
  }
  // #endregion bradley-terry-step

  const allRows = data.pairs.flatMap((p) => [data.rows[p.chosen]!, data.rows[p.rejected]!]);
  const raw = await rawScoresInChunks(model, allRows);
  const mean = raw.reduce((s, v) => s + v, 0) / raw.length;
  const std = Math.sqrt(raw.reduce((s, v) => s + (v - mean) ** 2, 0) / raw.length) || 1;
  let agree = 0;
  for (const index of heldOut) {
    // allRows holds pair i's chosen row at 2i and its rejected row at 2i + 1.
    const [chosen, rejected] = [raw[2 * index]!, raw[2 * index + 1]!];
    // The verifier's order: the right answer is `chosen` unless the label was flipped.
    if (data.pairs[index]!.flipped ? rejected > chosen : chosen > rejected) agree += 1;
  }
  return {
    rewardModel: new RewardModel(model, mean, std),
    report: {
      pairs: data.pairs.length,
      heldOutPairs: heldOut.length,
      firstLoss,
      lastLoss,
      heldOutAccuracy: heldOut.length > 0 ? agree / heldOut.length : NaN,
      mean,
      std,
    },
  };
}

/** Raw scores of many rows, 256 at a time (bounded activation memory). */
async function rawScoresInChunks(
  model: LanguageModel,
  rows: readonly RolloutRow[],
): Promise<Float32Array> {
  const out = new Float32Array(rows.length);
  for (let start = 0; start < rows.length; start += 256) {
    const { scores } = await rawScores(model, rows.slice(start, start + 256));
    out.set(scores, start);
  }
  return out;
}
