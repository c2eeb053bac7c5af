/**
 * Token tasks asked as chats: the ids of prompt and answer, and strict verification (a right
 * answer counts only when the turn ends).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  chatAnswerIds,
  chatCompletion,
  chatPromptIds,
  chatTokenizer,
  verifyChatCompletion,
} from '../../src/agents/chat-task';
import { additionTask } from '../../src/envs/token-tasks/addition';
import { trainBpe } from '../../src/models/hf/bpe-trainer';
import {
  generationConfigJson,
  tokenizerConfigJson,
  tokenizerJson,
} from '../../src/models/hf/bpe-tokenizer-files';
import { HfTokenizer } from '../../src/models/hf/hf-tokenizer';
import { CharTokenizer } from '../../src/models/tokenizer';

const corpus = JSON.parse(readFileSync('tests/fixtures/hf/bpe_corpus.json', 'utf8')) as {
  texts: string[];
};

async function tokenizer(chatTemplate?: string) {
  const bpe = trainBpe(corpus.texts, { merges: 80 });
  const config = tokenizerConfigJson(bpe, 64) as Record<string, unknown>;
  if (chatTemplate !== undefined) config.chat_template = chatTemplate;
  return chatTokenizer(
    await HfTokenizer.load('chat-task-test', {
      tokenizerJson: JSON.stringify(tokenizerJson(bpe)),
      tokenizerConfig: JSON.stringify(config),
      generationConfig: JSON.stringify(generationConfigJson(bpe)),
    }),
  );
}

const task = additionTask({ minDigits: 1, maxDigits: 2 });
const sample = { prompt: '12+34=', answer: '46' };

describe('chat tasks', () => {
  it('writes the prompt as a user turn and the answer as the assistant turn that ends', async () => {
    const tok = await tokenizer();
    const prompt = chatPromptIds(tok, sample);
    const answer = chatAnswerIds(tok, sample.answer);
    expect(tok.decode(prompt)).toBe('<|im_start|>user\n12+34=<|im_end|>\n<|im_start|>assistant\n');
    expect(tok.decode(answer)).toBe('46<|im_end|>');
    expect(answer.at(-1)).toBe(tok.endOfTurn);
    // Encoded apart or together, the same ids: training sees what generation will write.
    const whole = tok.encode(tok.decode(prompt) + '46<|im_end|>');
    expect(Array.from(whole)).toEqual([...prompt, ...answer]);
  });

  it('asks a template with a thinking mode (as Qwen3 has) for the answer alone', async () => {
    // Qwen3's templates think unless told otherwise; told, they close an empty thinking block.
    const tok = await tokenizer(
      "{%- for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}" +
        "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}" +
        '{%- if enable_thinking is defined and enable_thinking is false %}' +
        "{{ '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}",
    );
    const asked = '<|im_start|>user\n12+34=<|im_end|>\n<|im_start|>assistant\n';
    expect(
      tok.applyChatTemplate([{ role: 'user', content: '12+34=' }], { addGenerationPrompt: true }),
    ).toBe(asked);
    expect(tok.decode(chatPromptIds(tok, sample))).toBe(`${asked}<think>\n\n</think>\n\n`);
  });

  it('counts a right answer only when the turn ends', async () => {
    const tok = await tokenizer();
    const right = chatAnswerIds(tok, '46');
    expect(verifyChatCompletion(task, tok, sample, right)).toBe(1);
    // Tokens after the end of turn are not part of the answer.
    expect(verifyChatCompletion(task, tok, sample, [...right, ...tok.encode('99')])).toBe(1);
    expect(verifyChatCompletion(task, tok, sample, tok.encode('46'))).toBe(0);
    expect(verifyChatCompletion(task, tok, sample, chatAnswerIds(tok, '47'))).toBe(0);
    expect(verifyChatCompletion(task, tok, sample, chatAnswerIds(tok, ' 46'))).toBe(0);
    expect(chatCompletion(tok, tok.encode('4'))).toEqual({ text: '4', stopped: false });
  });

  it('refuses a tokenizer without a chat template', () => {
    expect(() => chatTokenizer(CharTokenizer.createDefault())).toThrow(/chat template/);
  });
});
