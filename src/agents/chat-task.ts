/**
 * A token task as a chat, for models with a chat template: the task's prompt is the user's
 * message, the model answers in the assistant's turn, and the turn's end token ends the answer.
 *
 *   prompt ids = template([{ role: 'user', content: sample.prompt }], generation prompt on)
 *   answer ids = encode(sample.answer) + [end of turn]
 *
 * Strict success: the completion ends with the end-of-turn token (or another stop id) and the
 * text before it, special tokens left out, passes the task's verifier. A completion cut off at
 * the length limit fails whatever its text.
 */
import type { Tokenizer } from '../models/tokenizer-api';
import { OpInputError } from '../ops/errors';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';

/** A tokenizer that can write chats, with the id that ends an assistant's turn. */
export interface ChatTokenizer extends Tokenizer {
  applyChatTemplate: NonNullable<Tokenizer['applyChatTemplate']>;
  readonly endOfTurn: number | undefined;
}

/** The tokenizer as a ChatTokenizer; refuses one without a template or an end-of-turn token. */
export function chatTokenizer(tokenizer: Tokenizer & { endOfTurn?: number }): ChatTokenizer {
  if (!tokenizer.applyChatTemplate) {
    throw new OpInputError('chatTask', 'tokenizer', 'must have a chat template');
  }
  if (tokenizer.endOfTurn === undefined) {
    throw new OpInputError(
      'chatTask',
      'tokenizer',
      "must have an end-of-turn token (its template's)",
    );
  }
  return tokenizer as ChatTokenizer;
}

/**
 * How the lab's tasks render chats: the answer without a reasoning block. A task gives a turn 8–48
 * tokens, and a model that thinks first (Qwen3's template turns thinking on by default) would
 * spend them all before it answers; TRL users pass the same as
 * `chat_template_kwargs={"enable_thinking": False}`.
 */
export const TASK_CHAT_OPTIONS = { thinking: false } as const;

/** The ids of the chat that asks `sample`'s prompt, ending where the assistant starts writing. */
export function chatPromptIds(tokenizer: ChatTokenizer, sample: TokenTaskSample): Int32Array {
  const text = tokenizer.applyChatTemplate([{ role: 'user', content: sample.prompt }], {
    ...TASK_CHAT_OPTIONS,
    addGenerationPrompt: true,
  });
  return tokenizer.encode(text);
}

/** The ids the assistant writes for `answer`: its tokens, then the end-of-turn token. */
export function chatAnswerIds(tokenizer: ChatTokenizer, answer: string): Int32Array {
  const ids = tokenizer.encode(answer);
  const out = new Int32Array(ids.length + 1);
  out.set(ids);
  out[ids.length] = tokenizer.endOfTurn!;
  return out;
}

/** A generated completion (ids after the prompt): its text and whether a stop id ended it. */
export function chatCompletion(
  tokenizer: ChatTokenizer,
  tokens: ArrayLike<number>,
): { text: string; stopped: boolean } {
  const ids = Array.from(tokens);
  const stop = ids.findIndex((id) => tokenizer.stopIds.includes(id));
  const kept = (stop < 0 ? ids : ids.slice(0, stop)).filter((id) => id < tokenizer.vocabSize);
  return { text: tokenizer.decode(kept, { skipSpecial: true }), stopped: stop >= 0 };
}

/** 1 for a strictly right completion (see the file comment), else 0. */
export function verifyChatCompletion(
  task: TokenTask,
  tokenizer: ChatTokenizer,
  sample: TokenTaskSample,
  tokens: ArrayLike<number>,
): number {
  const { text, stopped } = chatCompletion(tokenizer, tokens);
  return stopped ? task.verify(sample, text) : 0;
}
