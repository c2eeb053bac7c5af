/**
 * Answers of known rightness on a small copy task, for tests that need them without a trained
 * model: every other row is right (a copy of the prompt's letters), the rest `wrong` (or every row
 * wrong with `right: false`), each closed by <eos>. Built on the agent tests' scripted policy.
 */
import { createTokenTask } from '../../src/agents/token-task-registry';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { scriptedPolicy } from '../agents/scripted-policy';

const tokenizer = CharTokenizer.createDefault();
const task = createTokenTask('copy', { minLength: 3, maxLength: 4, alphabet: 'abcde' });
const MAX_NEW = 6;

function scripted(options: { wrong: string; right?: boolean }): LanguageModel {
  let row = 0; // generate() asks for rows in order, one call of `next` each
  return scriptedPolicy(tokenizer, (promptText) => {
    const letters = promptText.replace('<bos>', '').slice(0, -1); // "<bos>abc:" → "abc"
    const right = options.right !== false && row++ % 2 === 0;
    return `${right ? letters : options.wrong}<eos>`;
  });
}

/** A tiny transformer for this task (a reward model has the value head). */
function tinyConfig(valueHead: boolean): TransformerConfig {
  return {
    vocab: tokenizer.vocabSize,
    context: task.maxChars + 2 + MAX_NEW,
    width: 16,
    layers: 1,
    heads: 2,
    tiedEmbeddings: true,
    valueHead,
  };
}

export const SCRIPTED_COPY = { tokenizer, task, MAX_NEW, scripted, tinyConfig };
