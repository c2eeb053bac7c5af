import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../src/models/hf/hf-tokenizer';
import {
  answerRoom,
  describeGenerated,
  generatedTokens,
  logprobColor,
  logprobScale,
  promptIds,
} from '../../src/state/chat-turns';

const DIR = 'tests/fixtures/hf/llama-tiny';
let tokenizer: HfTokenizer;

beforeAll(async () => {
  tokenizer = await HfTokenizer.load('llama-tiny', {
    tokenizerJson: readFileSync(`${DIR}/tokenizer.json`),
    tokenizerConfig: readFileSync(`${DIR}/tokenizer_config.json`),
    generationConfig: readFileSync(`${DIR}/generation_config.json`),
  });
});

describe('chat turns', () => {
  it("writes the prompt with the model's template and its default system prompt", () => {
    const ids = promptIds(tokenizer, [{ role: 'user', content: 'hi' }], '  ');
    expect(tokenizer.decode(ids)).toBe(
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('puts a system prompt and earlier turns in order', () => {
    const ids = promptIds(
      tokenizer,
      [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: 'b' },
        { role: 'user', content: 'c' },
      ],
      'Be brief.',
    );
    expect(tokenizer.decode(ids)).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\na<|im_end|>\n' +
        '<|im_start|>assistant\nb<|im_end|>\n<|im_start|>user\nc<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('leaves the answer the room the context has, and refuses a full context', () => {
    expect(answerRoom(10, 48, 256)).toBe(48);
    expect(answerRoom(240, 48, 256)).toBe(16);
    expect(() => answerRoom(256, 48, 256)).toThrow(/256 tokens, the context holds 256/);
  });

  it('shows generated ids as tokens with their log-probs', () => {
    const end = tokenizer.stopIds[0]!;
    const tokens = generatedTokens(tokenizer, [end], [-0.25]);
    expect(tokens).toEqual([{ id: end, text: '<|im_end|>', logprob: -0.25, special: true }]);
    expect(describeGenerated(tokens[0]!)).toBe(
      `"<|im_end|>" id ${end}, log-prob -0.250 (p = 0.779), special`,
    );
  });

  it("colours log-probs on the inspector's blue side, the scale at least 1 nat", () => {
    expect(logprobColor(0, 3)).toBe('rgb(255, 255, 255)');
    expect(logprobColor(-3, 3)).toBe('rgb(33, 102, 172)');
    // −0.5 on a 1-nat scale (0.2 is raised to 1): half way to blue, 144 = 255 − 222/2.
    expect(logprobColor(-0.5, 0.2)).toBe('rgb(144, 179, 214)');
    const t = (logprob: number) => ({ id: 0, text: 'a', logprob, special: false });
    expect(logprobScale([t(-0.1), t(-2.5), t(-Infinity)])).toBe(2.5);
  });
});
