/**
 * Success rate of a language model on a token task: generate a completion for fresh prompts and ask
 * the task's verifier. Greedy decoding (temperature 0) by default, so the number measures what the
 * policy knows rather than the luck of a draw.
 */
import { isAgentTask, type AgentTask } from '../agents/agent-task';
import { episodeTranscript, runEpisodes } from '../agents/episode';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { Generation } from '../models/generate';
import type { LanguageModel } from '../models/language-model';
import type { SampleOptions } from '../ops/nn/sample';
import type { CharTokenizer } from '../models/tokenizer';
import { seededRandom } from '../util/random';

export interface EvaluationOptions {
  /** Prompts to try. Default 128. */
  samples?: number;
  /** Seed of the prompts (and of the sampler when not greedy). */
  seed: number;
  /** Default greedy: { temperature: 0 }. */
  sampling?: SampleOptions;
}

export interface Evaluation {
  successRate: number;
  samples: number;
  /** A few prompt → completion pairs, for a human to look at. */
  examples: { prompt: string; completion: string; correct: boolean }[];
}

/** The text a row generated, up to (not including) its first <eos>; other specials dropped. */
export function completionText(
  tokenizer: CharTokenizer,
  generation: Generation,
  row: number,
): string {
  const { maxLength: L } = generation;
  const ids: number[] = [];
  for (let t = 0; t < L; t++) {
    if (generation.mask[row * L + t] !== 1) continue;
    const id = generation.tokens[row * L + t]!;
    if (id === tokenizer.eos) break;
    ids.push(id);
  }
  return tokenizer.decode(ids, { skipSpecial: true });
}

export function promptTokens(tokenizer: CharTokenizer, sample: TokenTaskSample): Int32Array {
  return Int32Array.from([tokenizer.bos, ...tokenizer.encode(sample.prompt)]);
}

export async function evaluateTask(
  model: LanguageModel,
  tokenizer: CharTokenizer,
  task: TokenTask,
  options: EvaluationOptions,
): Promise<Evaluation> {
  const count = options.samples ?? 128;
  const random = seededRandom(options.seed);
  const samples = Array.from({ length: count }, () => task.sample(random));
  const maxLength = Math.min(model.config.context, task.maxChars + 2);
  if (isAgentTask(task)) {
    return evaluateEpisodes(model, tokenizer, task, samples, maxLength, options);
  }
  const generation = await model.generate({
    prompts: samples.map((s) => promptTokens(tokenizer, s)),
    maxLength,
    maxNewTokens: maxLength - 1,
    stopTokens: [tokenizer.eos],
    padToken: tokenizer.pad,
    sampling: options.sampling ?? { temperature: 0 },
    seed: options.seed >>> 0,
  });
  let correct = 0;
  const examples: Evaluation['examples'] = [];
  samples.forEach((sample, row) => {
    const completion = completionText(tokenizer, generation, row);
    const ok = task.verify(sample, completion) === 1;
    if (ok) correct += 1;
    if (examples.length < 6) examples.push({ prompt: sample.prompt, completion, correct: ok });
  });
  return { successRate: correct / count, samples: count, examples };
}

/** Agent tasks: whole episodes (tools included); correct when the answer verifies. */
async function evaluateEpisodes(
  model: LanguageModel,
  tokenizer: CharTokenizer,
  task: AgentTask,
  samples: readonly TokenTaskSample[],
  maxLength: number,
  options: EvaluationOptions,
): Promise<Evaluation> {
  const episodes = await runEpisodes({
    policy: model,
    tokenizer,
    task,
    samples,
    maxLength,
    maxTurnTokens: maxLength - 1,
    sampling: options.sampling ?? { temperature: 0 },
    seed: options.seed >>> 0,
  });
  let correct = 0;
  const examples: Evaluation['examples'] = [];
  for (const episode of episodes) {
    const ok = episode.answer !== null && task.verify(episode.sample, episode.answer) === 1;
    if (ok) correct += 1;
    const completion = episodeTranscript(episode);
    if (examples.length < 6)
      examples.push({ prompt: episode.sample.prompt, completion, correct: ok });
  }
  return { successRate: correct / episodes.length, samples: episodes.length, examples };
}
