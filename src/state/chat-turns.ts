/**
 * The chat of "Bring a model" as pure steps: the conversation → the prompt's token ids (the
 * model's own chat template), the room left in the context for the answer, and the answer's
 * tokens with their log-probs and colours for the token-by-token view.
 */
import type { ChatMessage, Tokenizer } from '../models/tokenizer-api';
import { diverging } from './token-colors';

export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
  /** An assistant turn's generated tokens (stop token included) with their log-probs. */
  tokens?: GeneratedToken[];
  /** 'stop': the model ended its turn; 'length': the max-tokens limit cut it. */
  finish?: 'stop' | 'length';
}

export interface GeneratedToken {
  id: number;
  text: string;
  /** log q of the token under the sampling distribution (0 when greedy). */
  logprob: number;
  special: boolean;
}

/**
 * The prompt's ids: the system prompt (when not blank) and the turns through the model's chat
 * template with the assistant's opening added. A model without a template gets the turns' text
 * joined by newlines, after its BOS where it has one.
 */
export function promptIds(
  tokenizer: Tokenizer,
  turns: readonly ChatTurn[],
  system: string,
): Int32Array {
  const messages: ChatMessage[] = [];
  if (system.trim() !== '') messages.push({ role: 'system', content: system });
  for (const turn of turns) messages.push({ role: turn.role, content: turn.content });
  if (tokenizer.applyChatTemplate) {
    return tokenizer.encode(tokenizer.applyChatTemplate(messages, { addGenerationPrompt: true }));
  }
  const text = tokenizer.encode(messages.map((m) => m.content).join('\n') + '\n');
  if (tokenizer.bos === undefined) return text;
  const out = new Int32Array(text.length + 1);
  out[0] = tokenizer.bos;
  out.set(text, 1);
  return out;
}

/**
 * New tokens allowed: the asked-for maximum, less where the prompt leaves less room in `context`
 * positions. Throws when the prompt alone fills the context (the conversation is too long).
 */
export function answerRoom(promptLength: number, maxTokens: number, context: number): number {
  const room = context - promptLength;
  if (room < 1) {
    throw new Error(
      `the conversation is ${promptLength} tokens, the context holds ${context}: clear the chat or shorten the system prompt`,
    );
  }
  return Math.min(maxTokens, room);
}

/** The generated ids as tokens for the view. */
export function generatedTokens(
  tokenizer: Tokenizer,
  ids: ArrayLike<number>,
  logprobs: ArrayLike<number>,
): GeneratedToken[] {
  return Array.from(ids, (id, i) => ({
    id,
    text: tokenizer.token(id),
    logprob: logprobs[i]!,
    special: tokenizer.isSpecial(id),
  }));
}

/**
 * A token's colour, on the inspector's diverging scale: log-probs are ≤ 0, so white for a sure
 * token (log q = 0) to full blue at `scale` (the answer's most negative log-prob, or 1 nat if all
 * are closer to 0).
 */
export function logprobColor(logprob: number, scale: number): string {
  return diverging(logprob / Math.max(scale, 1));
}

/** The colour scale of an answer: its largest |log-prob|. */
export function logprobScale(tokens: readonly GeneratedToken[]): number {
  let max = 0;
  for (const t of tokens) if (Number.isFinite(t.logprob)) max = Math.max(max, -t.logprob);
  return max;
}

/** A token's tooltip: its text as JSON, id, log-prob and probability. */
export function describeGenerated(token: GeneratedToken): string {
  const p = Math.exp(token.logprob);
  return `${JSON.stringify(token.text)} id ${token.id}, log-prob ${token.logprob.toFixed(3)} (p = ${p.toFixed(3)})${token.special ? ', special' : ''}`;
}
