/**
 * The BPE trainer against the independent Python trainer of scripts/reference/ (same corpus, same
 * merges in the same order), and its encoding against @huggingface/tokenizers reading the
 * tokenizer.json written from its merges.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyMerges, preTokenize, trainBpe } from '../../../src/models/hf/bpe-trainer';
import {
  generationConfigJson,
  specialTokenIds,
  tokenizerConfigJson,
  tokenizerJson,
} from '../../../src/models/hf/bpe-tokenizer-files';
import { HfTokenizer } from '../../../src/models/hf/hf-tokenizer';

const corpus = JSON.parse(readFileSync('tests/fixtures/hf/bpe_corpus.json', 'utf8')) as {
  texts: string[];
};
const fixture = JSON.parse(readFileSync('tests/fixtures/hf/llama-tiny/tokenizer.json', 'utf8')) as {
  model: { merges: string[]; vocab: Record<string, number> };
};

describe('trainBpe', () => {
  it("learns the reference trainer's 123 merges from its corpus, in order", () => {
    const bpe = trainBpe(corpus.texts, { merges: 123, minFrequency: 1 });
    expect(bpe.merges.map(([a, b]) => `${a} ${b}`)).toEqual(fixture.model.merges);
    // Bytes in byte order, then the merges: the reference's vocabulary, ids and all.
    const vocab = Object.fromEntries(bpe.vocab.map((t, id) => [t, id]));
    const plain = Object.fromEntries(
      Object.entries(fixture.model.vocab).filter(([, id]) => id < 379),
    );
    expect(vocab).toEqual(plain);
  });

  it('gives the same merges whatever the order of the texts', () => {
    const reversed = [...corpus.texts].reverse();
    expect(trainBpe(reversed, { merges: 60 })).toEqual(trainBpe(corpus.texts, { merges: 60 }));
  });

  it('stops when no pair is seen minFrequency times', () => {
    // "ab ab": pre-tokens "ab", "Ġab" → pairs (a,b) ×2, (Ġ,a) ×1.
    const bpe = trainBpe(['ab ab'], { merges: 10 });
    expect(bpe.merges).toEqual([['a', 'b']]);
    expect(trainBpe(['ab ab'], { merges: 10, minFrequency: 1 }).merges).toEqual([
      ['a', 'b'],
      ['Ġ', 'ab'],
    ]);
  });

  it('never merges across digits, newlines or spaces', () => {
    expect(preTokenize('12+345=\nuser')).toEqual(['1', '2', '+', '3', '4', '5', '=Ċ', 'user']);
    const bpe = trainBpe(
      Array.from({ length: 20 }, () => '1234 1234'),
      { merges: 50 },
    );
    for (const [a, b] of bpe.merges) expect(`${a}${b}`).not.toMatch(/[0-9].*[0-9]/);
  });

  it('refuses bad options by name', () => {
    expect(() => trainBpe([], { merges: -1 })).toThrow(/merges/);
    expect(() => trainBpe([], { merges: 3, minFrequency: 0 })).toThrow(/minFrequency/);
    expect(() => trainBpe([3 as unknown as string], { merges: 3 })).toThrow(/texts\[0\]/);
  });
});

describe('a trained BPE in the Hugging Face layout', () => {
  it('encodes as applyMerges does, through @huggingface/tokenizers, and round-trips', async () => {
    const bpe = trainBpe(corpus.texts, { merges: 100 });
    const tokenizer = await HfTokenizer.load('trained', {
      tokenizerJson: JSON.stringify(tokenizerJson(bpe)),
      tokenizerConfig: JSON.stringify(tokenizerConfigJson(bpe, 64)),
      generationConfig: JSON.stringify(generationConfigJson(bpe)),
    });
    const ids = new Map(bpe.vocab.map((t, id) => [t, id]));
    for (const text of [...corpus.texts.slice(0, 40), 'Déjà vu, 日本 🙂\ttab  two  spaces\r\n']) {
      const expected = preTokenize(text).flatMap((p) =>
        applyMerges(p, bpe.merges).map((t) => ids.get(t)!),
      );
      expect(Array.from(tokenizer.encode(text)), text).toEqual(expected);
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
    const special = specialTokenIds(bpe);
    expect(tokenizer.vocabSize).toBe(bpe.vocab.length + 3);
    expect(tokenizer.eos).toBe(special['<|im_end|>']);
    expect(tokenizer.pad).toBe(special['<|endoftext|>']);
    expect(tokenizer.endOfTurn).toBe(special['<|im_end|>']);
  });

  it('renders ChatML, and refuses a late system message and unknown roles', async () => {
    const bpe = trainBpe(corpus.texts, { merges: 20 });
    const tokenizer = await HfTokenizer.load('trained', {
      tokenizerJson: JSON.stringify(tokenizerJson(bpe)),
      tokenizerConfig: JSON.stringify(tokenizerConfigJson(bpe, 64)),
    });
    const text = tokenizer.applyChatTemplate!(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: '2+3=' },
        { role: 'assistant', content: '5' },
      ],
      { addGenerationPrompt: false },
    );
    expect(text).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+3=<|im_end|>\n' +
        '<|im_start|>assistant\n5<|im_end|>\n',
    );
    expect(
      tokenizer.applyChatTemplate!([{ role: 'user', content: 'hi' }], {
        addGenerationPrompt: true,
      }),
    ).toBe('<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
    expect(() =>
      tokenizer.applyChatTemplate!(
        [
          { role: 'user', content: 'a' },
          { role: 'system', content: 'b' },
        ],
        { addGenerationPrompt: true },
      ),
    ).toThrow(/system message may only come first/);
    expect(() =>
      tokenizer.applyChatTemplate!([{ role: 'tool', content: '4' }], { addGenerationPrompt: true }),
    ).toThrow(/role must be system, user or assistant, got tool/);
  });
});
