/**
 * A scripted policy on a small copy task, for tests that need answers of known rightness without a
 * trained model: every other row is right (a copy of the prompt's letters), the rest `wrong`.
 */
import { createTokenTask } from '../../src/envs/token-tasks/registry';
import type { GenerateRequest, Generation } from '../../src/models/generate';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';

const tokenizer = CharTokenizer.createDefault();
const task = createTokenTask('copy', { minLength: 3, maxLength: 4, alphabet: 'abcde' });
const MAX_NEW = 6;

/**
 * A policy that answers every other row right (a copy of the prompt's letters) and the rest with
 * `wrong`; with `right: false` it is never right. Rows are padded to the request's length.
 */
function scripted(options: { wrong: string; right?: boolean }): LanguageModel {
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: task.maxChars + 2 + MAX_NEW,
    width: 16,
    layers: 1,
    heads: 2,
    tiedEmbeddings: true,
    valueHead: false,
  };
  return {
    config,
    async generate(request: GenerateRequest): Promise<Generation> {
      const L = request.maxLength;
      const B = request.prompts.length;
      const tokens = new Int32Array(B * L).fill(request.padToken);
      const mask = new Float32Array(B * L);
      request.prompts.forEach((prompt, b) => {
        // The prompt is <bos> letters ':'; the right answer is the letters.
        const letters = tokenizer.decode([...prompt.subarray(1, prompt.length - 1)]);
        const text = options.right !== false && b % 2 === 0 ? letters : options.wrong;
        const written = [...tokenizer.encode(text), tokenizer.eos];
        tokens.set(prompt, b * L);
        tokens.set(written, b * L + prompt.length);
        mask.fill(1, b * L + prompt.length, b * L + prompt.length + written.length);
      });
      return {
        batch: B,
        maxLength: L,
        tokens,
        logprobs: new Float32Array(B * L),
        mask,
        promptLengths: Int32Array.from(request.prompts, (p) => p.length),
      };
    },
  } as unknown as LanguageModel;
}

export const SCRIPTED_COPY = { tokenizer, task, MAX_NEW, scripted };
