/**
 * How well a Llama-family CPU model does a token task asked as a chat (src/agents/chat-task.ts):
 * `samples` prompts drawn from seededRandom(seed) — the prompts evaluateTask draws for the tiny
 * GPT — each answered `repeats` times, greedily (temperature 0) or sampled. Strict success only:
 * the answer must end its turn.
 *
 * pass@1 (`successRate`) is the mean success over all answers; pass@G (`promptPassRate`) the
 * share of prompts with at least one right answer among their G: what a GRPO group needs.
 */
import { checkInt, checkRange } from '../ops/validate';
import { llamaGenerate } from '../models/hf/llama-cpu-generate';
import type { LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import { seededRandom } from '../util/random';
import {
  chatCompletion,
  chatPromptIds,
  verifyChatCompletion,
  type ChatTokenizer,
} from '../agents/chat-task';
import type { TokenTask } from '../envs/token-tasks/types';

export interface ChatEvaluateOptions {
  samples: number;
  seed: number;
  /** Answers per prompt, default 1. */
  repeats?: number;
  /** 0 (default) is greedy. */
  temperature?: number;
  /** Seed of the sampler (counter-based, per chunk of sequences), default 0. */
  samplingSeed?: number;
  /** Most tokens an answer may take, its end-of-turn token included. */
  maxNewTokens: number;
  /** Sequences generated together, default 64. */
  chunk?: number;
}

export interface ChatEvaluation {
  successRate: number;
  promptPassRate: number;
  /** The first prompts' first answers, for a look. */
  examples: { prompt: string; answer: string; completion: string; correct: boolean }[];
}

export function evaluateChatTask(
  model: LlamaCpuModel,
  tokenizer: ChatTokenizer,
  task: TokenTask,
  options: ChatEvaluateOptions,
): ChatEvaluation {
  const op = 'evaluateChatTask';
  checkInt(op, 'samples', options.samples, 1, 1 << 16);
  const repeats = options.repeats ?? 1;
  checkInt(op, 'repeats', repeats, 1, 1024);
  const temperature = options.temperature ?? 0;
  checkRange(op, 'temperature', temperature, 0, 100);
  const chunk = options.chunk ?? 64;
  checkInt(op, 'chunk', chunk, 1, 4096);
  const random = seededRandom(options.seed);
  const prompts = Array.from({ length: options.samples }, () => task.sample(random));
  const rows = prompts.flatMap((sample) => Array.from({ length: repeats }, () => sample));
  const promptIds = prompts.map((sample) => chatPromptIds(tokenizer, sample));
  const verdicts: number[] = [];
  const completions: string[] = [];
  for (let start = 0, c = 0; start < rows.length; start += chunk, c++) {
    const part = rows.slice(start, start + chunk);
    const ids = part.map((_, i) => promptIds[Math.floor((start + i) / repeats)]!);
    const out = llamaGenerate(model, ids, {
      maxNewTokens: options.maxNewTokens,
      temperature,
      seed: ((options.samplingSeed ?? 0) + c) >>> 0,
      stopIds: tokenizer.stopIds,
    });
    part.forEach((sample, i) => {
      const tokens = out.tokens[i]!;
      verdicts.push(verifyChatCompletion(task, tokenizer, sample, tokens));
      completions.push(chatCompletion(tokenizer, tokens).text);
    });
  }
  let right = 0;
  let passed = 0;
  for (let p = 0; p < prompts.length; p++) {
    const group = verdicts.slice(p * repeats, (p + 1) * repeats);
    const wins = group.reduce((a, b) => a + b, 0);
    right += wins;
    if (wins > 0) passed++;
  }
  return {
    successRate: right / rows.length,
    promptPassRate: passed / prompts.length,
    examples: prompts.slice(0, 8).map((sample, p) => ({
      prompt: sample.prompt,
      answer: sample.answer,
      completion: completions[p * repeats]!,
      correct: verdicts[p * repeats] === 1,
    })),
  };
}
