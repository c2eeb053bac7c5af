/**
 * Supervised warm-up (SFT): teach a fresh transformer a task's format and some of its answers by
 * cross-entropy on prompt → reference-completion pairs, loss on completion tokens only. RL then
 * starts from a policy that succeeds sometimes, as practice requires (GRPO on a model that never
 * succeeds has all-zero rewards and nothing to learn from).
 *
 * Read top to bottom: config, seeding, the loop (sample a batch, step, log), evaluation.
 */
import { isAgentTask } from '../agents/agent-task';
import { packTranscripts } from '../agents/transcripts';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel, StepMetrics } from '../models/language-model';
import type { OptimizerConfig } from '../models/optimizer';
import type { CharTokenizer } from '../models/tokenizer';
import { checkInt } from '../ops/validate';
import { seededRandom } from '../util/random';
import { evaluateTask, type Evaluation } from './evaluate';
import { packSequences, type SequenceBatch } from '../models/sequence-batch';

export interface SftConfig {
  /** Optimizer steps, ≥ 1. */
  steps: number;
  /** Sequences per step (TRL SFTConfig per_device_train_batch_size), ≥ 1. */
  batchSize: number;
  /** Optimizer settings (TRL/HF learning_rate, weight_decay, adam_beta1/2, max_grad_norm). */
  optimizer: OptimizerConfig;
  /** Seed of the training prompts. */
  seed: number;
  /** Evaluate the success rate every this many steps (0 = only at the end). */
  evalEvery: number;
  /** Prompts per evaluation. */
  evalSamples: number;
}

export const DEFAULT_SFT_CONFIG: SftConfig = {
  steps: 300,
  batchSize: 32,
  optimizer: { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 },
  seed: 1,
  evalEvery: 0,
  evalSamples: 128,
};

export interface SftProgress {
  step: number;
  metrics: StepMetrics[];
  evaluation?: Evaluation;
}

export interface SftResult {
  history: StepMetrics[];
  evaluations: { step: number; evaluation: Evaluation }[];
  final: Evaluation;
}

/**
 * Single-turn tasks train on prompt → answer; agent tasks on prompt → a correct transcript.
 * Also the ptx loss's demonstrations (retained-task.ts).
 */
export function sftBatch(
  tokenizer: CharTokenizer,
  task: TokenTask,
  samples: readonly TokenTaskSample[],
  seq: number,
): SequenceBatch {
  if (isAgentTask(task)) {
    const items = samples.map((s) => ({ prompt: s.prompt, transcript: task.demonstration(s) }));
    return packTranscripts(tokenizer, items, seq);
  }
  const pairs = samples.map((s) => ({ prompt: s.prompt, completion: s.answer }));
  return packSequences(tokenizer, pairs, seq);
}

export async function runSft(
  model: LanguageModel,
  tokenizer: CharTokenizer,
  task: TokenTask,
  config: SftConfig,
  onProgress?: (progress: SftProgress) => void,
): Promise<SftResult> {
  checkInt('sft', 'steps', config.steps, 1, 1e7);
  checkInt('sft', 'batchSize', config.batchSize, 1, 4096);
  checkInt('sft', 'evalEvery', config.evalEvery, 0, 1e7);
  const random = seededRandom(config.seed);
  const seq = Math.min(model.spec.context, task.maxChars + 2);
  const history: StepMetrics[] = [];
  const evaluations: SftResult['evaluations'] = [];
  const evaluate = (step: number) =>
    evaluateTask(model, tokenizer, task, {
      samples: config.evalSamples,
      seed: (config.seed * 7919 + step) >>> 0,
    });

  for (let step = 1; step <= config.steps; step++) {
    const samples = Array.from({ length: config.batchSize }, () => task.sample(random));
    await model.trainCrossEntropy(sftBatch(tokenizer, task, samples, seq), config.optimizer);
    const evalNow = config.evalEvery > 0 && step % config.evalEvery === 0;
    if (evalNow || step === config.steps) {
      const metrics = await model.takeMetrics();
      history.push(...metrics);
      const evaluation = evalNow ? await evaluate(step) : undefined;
      if (evaluation) evaluations.push({ step, evaluation });
      onProgress?.({ step, metrics, evaluation });
    }
  }
  const final = await evaluate(config.steps);
  return { history, evaluations, final };
}
