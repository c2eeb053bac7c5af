/**
 * Packs prompt → completion pairs into the (B, T) arrays a causal LM trains on:
 *
 *   sequence  = <bos> prompt completion <eos> <pad>…
 *   tokens    = sequence[0 … T−1]      the model's input at each position
 *   targets   = sequence[1 … T]        the next token it should predict
 *   mask      = 1 where the target is a completion token or the closing <eos>, else 0
 *
 * so the loss trains the completion only (SFT practice: prompts are given, not learned).
 */
import { OpInputError } from '../ops/errors';
import type { Tokenizer } from './tokenizer-api';

export interface SequenceBatch {
  batch: number;
  seq: number;
  tokens: Int32Array; // (B, T)
  targets: Int32Array; // (B, T)
  mask: Float32Array; // (B, T) 0/1
}

export interface PromptCompletion {
  prompt: string;
  completion: string;
}

/** Packs `pairs` into a batch of length `seq`; a pair that does not fit is an error naming it. */
export function packSequences(
  tokenizer: Tokenizer,
  pairs: readonly PromptCompletion[],
  seq: number,
): SequenceBatch {
  const batch = pairs.length;
  const tokens = new Int32Array(batch * seq).fill(tokenizer.pad);
  const targets = new Int32Array(batch * seq).fill(tokenizer.pad);
  const mask = new Float32Array(batch * seq);
  pairs.forEach((pair, b) => {
    const prompt = tokenizer.encode(pair.prompt);
    const completion = tokenizer.encode(pair.completion);
    // A tokenizer without a begin token (some Hugging Face ones) starts at the prompt.
    const start = tokenizer.bos === undefined ? [] : [tokenizer.bos];
    const full = [...start, ...prompt, ...completion, tokenizer.eos];
    if (full.length - 1 > seq) {
      throw new OpInputError(
        'packSequences',
        `pairs[${b}]`,
        `needs ${full.length - 1} positions (prompt ${prompt.length} + completion ${completion.length} + <bos>/<eos>), but seq is ${seq}`,
      );
    }
    const firstTrained = start.length + prompt.length; // index in `full` of the first completion token
    for (let t = 0; t + 1 < full.length; t++) {
      tokens[b * seq + t] = full[t]!;
      targets[b * seq + t] = full[t + 1]!;
      mask[b * seq + t] = t + 1 >= firstTrained ? 1 : 0;
    }
  });
  return { batch, seq, tokens, targets, mask };
}
