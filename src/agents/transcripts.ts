/**
 * SFT data for agent tasks: a prompt and a correct transcript (calls, tool results, answer)
 * packed like sequence-batch.ts packs single-turn pairs, except that
 *   - the tool results `<result>…</result>` are in the input but never trained (mask 0): the model
 *     learns to call and to read results, not to predict what a tool will say;
 *   - no <eos> is added: an episode ends at `</answer>`, where the environment stops it.
 */
import type { CharTokenizer } from '../models/tokenizer';
import type { SequenceBatch } from '../models/sequence-batch';
import { OpInputError } from '../ops/errors';

export interface PromptTranscript {
  prompt: string;
  transcript: string;
}

export function packTranscripts(
  tokenizer: CharTokenizer,
  items: readonly PromptTranscript[],
  seq: number,
): SequenceBatch {
  const batch = items.length;
  const tokens = new Int32Array(batch * seq).fill(tokenizer.pad);
  const targets = new Int32Array(batch * seq).fill(tokenizer.pad);
  const mask = new Float32Array(batch * seq);
  const open = tokenizer.special['<result>'];
  const close = tokenizer.special['</result>'];
  items.forEach((item, b) => {
    const prompt = tokenizer.encode(item.prompt);
    const transcript = tokenizer.encode(item.transcript);
    const full = [tokenizer.bos, ...prompt, ...transcript];
    if (full.length - 1 > seq) {
      throw new OpInputError(
        'packTranscripts',
        `items[${b}]`,
        `needs ${full.length - 1} positions (prompt ${prompt.length} + transcript ${transcript.length} + <bos>), but seq is ${seq}`,
      );
    }
    let inResult = false;
    for (let t = 0; t + 1 < full.length; t++) {
      const target = full[t + 1]!;
      if (target === open) inResult = true;
      tokens[b * seq + t] = full[t]!;
      targets[b * seq + t] = target;
      mask[b * seq + t] = t + 1 > prompt.length && !inResult ? 1 : 0;
      if (target === close) inResult = false;
    }
  });
  return { batch, seq, tokens, targets, mask };
}
