/**
 * How a task's prompt reaches a model: its ids (in the model's chat template where it has one)
 * and their most, which sizes the rows a rollout generates into and a training step's memory.
 */
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';
import type { Tokenizer } from '../models/tokenizer-api';
import { isAgentTask } from './agent-task';
import { chatAgentLengthBound, chatAgentSetup } from './chat-episode';
import { chatPromptIds, chatTokenizer } from './chat-task';

/**
 * The ids a model is given for `sample`: with a chat template (a brought model), the user's turn
 * in that template ending where the assistant writes (src/agents/chat-task.ts); otherwise <bos>
 * and the prompt's characters (the tiny GPT's plain-text tasks).
 */
export function promptTokens(tokenizer: Tokenizer, sample: TokenTaskSample): Int32Array {
  if (tokenizer.applyChatTemplate) return chatPromptIds(chatTokenizer(tokenizer), sample);
  const ids = tokenizer.encode(sample.prompt);
  return tokenizer.bos === undefined ? ids : Int32Array.from([tokenizer.bos, ...ids]);
}

/**
 * The most prompt ids a sample of `task` can take: <bos> and one id per character, or, in a chat
 * template, the template's own ids (measured on an empty prompt) and one id per character (a BPE
 * token covers at least one character of the ASCII prompts the tasks write); for an agent task in
 * a chat template, the whole episode's bound besides what the model writes freely
 * (src/agents/chat-episode.ts).
 */
export function promptLengthBound(tokenizer: Tokenizer, task: TokenTask): number {
  if (!tokenizer.applyChatTemplate) return (tokenizer.bos === undefined ? 0 : 1) + task.maxChars;
  if (isAgentTask(task)) {
    return chatAgentLengthBound(chatAgentSetup(chatTokenizer(tokenizer), task), task);
  }
  const framing = chatPromptIds(chatTokenizer(tokenizer), { prompt: '', answer: '' }).length;
  return framing + task.maxChars;
}
