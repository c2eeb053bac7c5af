/**
 * Success rate of a language model on a token task: generate a completion for fresh prompts and ask
 * the task's verifier. Greedy decoding (temperature 0) by default, so the number measures what the
 * policy knows rather than the luck of a draw.
 */
import { isAgentTask, type AgentTask } from '../agents/agent-task';
import { runAgentEpisodes } from '../agents/agent-episodes';
import { episodeTranscript } from '../agents/episode';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { Generation } from '../models/generate';
import type { LanguageModel } from '../models/language-model';
import type { SampleOptions } from '../ops/nn/sample';
import { CharTokenizer } from '../models/tokenizer';
import type { Tokenizer } from '../models/tokenizer-api';
import { promptLengthBound, promptTokens } from '../agents/prompt-tokens';
import { OpInputError } from '../ops/errors';
import { checkInt } from '../ops/validate';
import { seededRandom } from '../util/random';

export interface EvaluationOptions {
  /** Prompts to try. Default 128. */
  samples?: number;
  /** Seed of the prompts (and of the sampler when not greedy). */
  seed: number;
  /** Default greedy: { temperature: 0 }. */
  sampling?: SampleOptions;
  /**
   * Answers drawn for each prompt (rows next to each other), default 1. With sampling, G repeats
   * give pass@1 (`successRate`, over all answers) and pass@G (`promptPassRate`): what a GRPO group
   * of G sees.
   */
  repeats?: number;
}

export interface Evaluation {
  /** Right answers over all answers (prompts × repeats). */
  successRate: number;
  /** Prompts with at least one right answer among their repeats. */
  promptPassRate: number;
  /** Answers judged: prompts × repeats. */
  samples: number;
  /** A few prompt → completion pairs, for a human to look at. */
  examples: { prompt: string; completion: string; correct: boolean }[];
}

/** The text a row generated, up to (not including) its first stop id; other specials dropped. */
export function completionText(tokenizer: Tokenizer, generation: Generation, row: number): string {
  const { maxLength: L } = generation;
  const ids: number[] = [];
  for (let t = 0; t < L; t++) {
    if (generation.mask[row * L + t] !== 1) continue;
    const id = generation.tokens[row * L + t]!;
    if (tokenizer.stopIds.includes(id)) break;
    ids.push(id);
  }
  return tokenizer.decode(ids, { skipSpecial: true });
}

/**
 * The tokenizer as the character tokenizer, for what only the tiny GPT's tasks do yet (agent
 * episodes, ptx demonstrations); a brought model's tokenizer is refused naming `what`.
 */
export function charTokenizerFor(tokenizer: Tokenizer, op: string, what: string): CharTokenizer {
  if (tokenizer instanceof CharTokenizer) return tokenizer;
  throw new OpInputError(
    op,
    what,
    `runs on the lab's character tokenizer only; a brought model's tokenizer (${tokenizer.spec.kind}) cannot run it yet`,
  );
}

export async function evaluateTask(
  model: LanguageModel,
  tokenizer: Tokenizer,
  task: TokenTask,
  options: EvaluationOptions,
): Promise<Evaluation> {
  const count = options.samples ?? 128;
  const repeats = options.repeats ?? 1;
  checkInt('evaluateTask', 'repeats', repeats, 1, 1024);
  const random = seededRandom(options.seed);
  const prompts = Array.from({ length: count }, () => task.sample(random));
  const samples = prompts.flatMap((s) => Array.from({ length: repeats }, () => s));
  // The longest prompt, its answer and the stop id.
  const maxLength = Math.min(model.spec.context, promptLengthBound(tokenizer, task) + 1);
  if (isAgentTask(task))
    return evaluateEpisodes(model, tokenizer, task, samples, maxLength, options);
  const generation = await model.generate({
    prompts: samples.map((s) => promptTokens(tokenizer, s)),
    maxLength,
    maxNewTokens: maxLength - 1,
    stopTokens: tokenizer.stopIds,
    padToken: tokenizer.pad,
    sampling: options.sampling ?? { temperature: 0 },
    seed: options.seed >>> 0,
  });
  const examples: Evaluation['examples'] = [];
  const verdicts = samples.map((sample, row) => {
    const completion = completionText(tokenizer, generation, row);
    const ok = task.verify(sample, completion) === 1;
    if (examples.length < 6) examples.push({ prompt: sample.prompt, completion, correct: ok });
    return ok;
  });
  return summarize(verdicts, repeats, examples);
}

/** Pass rates of verdicts laid out prompt by prompt, `repeats` answers each. */
function summarize(
  verdicts: readonly boolean[],
  repeats: number,
  examples: Evaluation['examples'],
): Evaluation {
  let correct = 0;
  let promptsPassed = 0;
  for (let start = 0; start < verdicts.length; start += repeats) {
    const group = verdicts.slice(start, start + repeats);
    correct += group.filter(Boolean).length;
    if (group.some(Boolean)) promptsPassed += 1;
  }
  const prompts = verdicts.length / repeats;
  return {
    successRate: correct / verdicts.length,
    promptPassRate: promptsPassed / prompts,
    samples: verdicts.length,
    examples,
  };
}

/** Agent tasks: whole episodes (tools included); correct when the answer verifies. */
async function evaluateEpisodes(
  model: LanguageModel,
  tokenizer: Tokenizer,
  task: AgentTask,
  samples: readonly TokenTaskSample[],
  maxLength: number,
  options: EvaluationOptions,
): Promise<Evaluation> {
  const episodes = await runAgentEpisodes({
    op: 'evaluateTask',
    policy: model,
    tokenizer,
    task,
    samples,
    maxLength,
    maxTurnTokens: maxLength - 1,
    sampling: options.sampling ?? { temperature: 0 },
    seed: options.seed >>> 0,
  });
  const examples: Evaluation['examples'] = [];
  const verdicts = episodes.map((episode) => {
    const ok = episode.answer !== null && task.verify(episode.sample, episode.answer) === 1;
    const completion = episodeTranscript(episode);
    if (examples.length < 6)
      examples.push({ prompt: episode.sample.prompt, completion, correct: ok });
    return ok;
  });
  return summarize(verdicts, options.repeats ?? 1, examples);
}
