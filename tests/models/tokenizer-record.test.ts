/** Tokenizer records from untrusted JSON: the character kind rebuilt, the Hugging Face kind checked. */
import { describe, expect, it } from 'vitest';
import { CharTokenizer, TokenizerError } from '../../src/models/tokenizer';
import { readTokenizerRecord } from '../../src/models/tokenizer-record';

const HF = {
  kind: 'hf',
  version: 1,
  source: 'HuggingFaceTB/SmolLM2-135M',
  sha256: '0f'.repeat(32),
};

describe('readTokenizerRecord', () => {
  it('reads a char record as CharTokenizer.fromSpec does, and an hf record field for field', () => {
    const chars = CharTokenizer.createDefault().spec;
    expect(readTokenizerRecord({ ...chars })).toEqual(chars);
    expect(readTokenizerRecord({ ...HF, extra: 1 })).toEqual(HF);
  });

  it('refuses a bad record, naming the field and the valid values', () => {
    const bad: [unknown, string][] = [
      [null, 'tokenizer: spec must be an object, got null'],
      [{ ...HF, kind: 'bpe' }, `spec.kind must be 'char' or 'hf', got "bpe"`],
      [{ ...HF, version: 2 }, 'spec.version must be 1, got number 2'],
      [{ ...HF, source: '' }, 'spec.source must be a string of 1–256 characters'],
      [{ ...HF, source: 'x'.repeat(257) }, 'spec.source must be a string of 1–256 characters'],
      [{ ...HF, sha256: 'AB'.repeat(32) }, 'spec.sha256 must be 64 lowercase hex digits'],
      [{ kind: 'char', version: 1, chars: 'aa' }, 'spec.chars index 1: duplicate character'],
    ];
    for (const [value, message] of bad) {
      expect(() => readTokenizerRecord(value)).toThrow(TokenizerError);
      expect(() => readTokenizerRecord(value)).toThrow(message);
    }
  });
});
