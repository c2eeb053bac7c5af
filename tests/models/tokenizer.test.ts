import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CharTokenizer,
  SPECIAL_TOKENS,
  TokenizerError,
  type TokenizerSpec,
} from '../../src/models/tokenizer';

const spec = (chars: string): TokenizerSpec => ({ kind: 'char', version: 1, chars });

describe('CharTokenizer', () => {
  const tok = CharTokenizer.createDefault();

  it('gives the special tokens ids 0…8 (PAD = 0) and the characters the ids after them', () => {
    expect(tok.special).toEqual({
      '<pad>': 0,
      '<bos>': 1,
      '<eos>': 2,
      '<call>': 3,
      '</call>': 4,
      '<result>': 5,
      '</result>': 6,
      '<answer>': 7,
      '</answer>': 8,
    });
    expect([tok.pad, tok.bos, tok.eos]).toEqual([0, 1, 2]);
    const ab = CharTokenizer.fromSpec(spec('ab'));
    expect(ab.vocabSize).toBe(11);
    expect(Array.from(ab.encode('ba'))).toEqual([10, 9]);
    for (let id = 0; id < 11; id++) expect(ab.isSpecial(id)).toBe(id < 9);
    expect(ab.isSpecial(-1)).toBe(false);
  });

  it('has a default alphabet of newline + printable ASCII without capitals (79 ids)', () => {
    // 1 newline + 95 printable (0x20–0x7E) − 26 capitals = 70 characters; + 9 specials = 79.
    const chars = CharTokenizer.DEFAULT_CHARS;
    expect(chars.length).toBe(70);
    expect(tok.vocabSize).toBe(79);
    for (const c of '0123456789abcdefghijklmnopqrstuvwxyz +-*/=(),.:?!\'"<>[]{}_#%\n') {
      expect(chars).toContain(c);
    }
    expect(chars).not.toMatch(/[A-Z]/);
  });

  it('encodes hand-worked examples', () => {
    // Default ids: '\n' 9, ' ' 10, '!'…'/' 11…25 ('+' = 21), '0'…'9' 26…35, ':' 36, '=' 39, …
    expect(Array.from(tok.encode('1+2'))).toEqual([27, 21, 28]);
    expect(Array.from(tok.encode('7=7'))).toEqual([33, 39, 33]);
    // 'a' follows '@' 42, '[' 43, '\' 44, ']' 45, '^' 46, '_' 47, '`' 48: 'a' = 49, 'z' = 74.
    expect(Array.from(tok.encode('az'))).toEqual([49, 74]);
    const ab = CharTokenizer.fromSpec(spec('ab'));
    expect(
      Array.from(ab.encode('<bos>ab<call>ba</call><result>a</result><answer>b</answer><eos>')),
    ).toEqual([1, 9, 10, 3, 10, 9, 4, 5, 9, 6, 7, 10, 8, 2]);
  });

  it('reads "<pad>" in text as characters, never as PAD', () => {
    // '<' 38, 'p' 64, 'a' 49, 'd' 52, '>' 40 in the default alphabet.
    expect(Array.from(tok.encode('<pad>'))).toEqual([38, 64, 49, 52, 40]);
    expect(() => CharTokenizer.fromSpec(spec('pad')).encode('<pad>')).toThrow(
      /index 0: character "<" \(U\+003C\)/,
    );
  });

  it('reads a "<" that starts no special token as a character', () => {
    expect(tok.decode(tok.encode('1<2 <cal <call'))).toBe('1<2 <cal <call');
    expect(Array.from(tok.encode('<<eos>'))).toEqual([38, 2]);
  });

  it('decodes, with or without the special tokens', () => {
    const ids = [1, 27, 21, 28, 7, 29, 8, 2, 0, 0];
    expect(tok.decode(ids)).toBe('<bos>1+2<answer>3</answer><eos><pad><pad>');
    expect(tok.decode(ids, { skipSpecial: true })).toBe('1+23');
    expect(tok.decode(new Int32Array(0))).toBe('');
    expect(tok.token(21)).toBe('+');
    expect(tok.token(3)).toBe('<call>');
  });

  it('rebuilds the same tokenizer from its spec', () => {
    const again = CharTokenizer.fromSpec(JSON.parse(JSON.stringify(tok.spec)) as TokenizerSpec);
    expect(again.spec).toEqual({ kind: 'char', version: 1, chars: CharTokenizer.DEFAULT_CHARS });
    expect(Array.from(again.encode('<call>lookup(x)</call>'))).toEqual(
      Array.from(tok.encode('<call>lookup(x)</call>')),
    );
  });

  it('property: decode(encode(s)) = s over the alphabet and the special strings; no PAD', () => {
    const pieces = [...CharTokenizer.DEFAULT_CHARS, ...SPECIAL_TOKENS];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        const ids = tok.encode(text);
        expect(tok.decode(ids)).toBe(text);
        for (const id of ids) {
          expect(id).toBeGreaterThan(0);
          expect(id).toBeLessThan(tok.vocabSize);
        }
        expect(ids.length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 300 },
    );
  });

  it('property: any valid alphabet of BMP characters round-trips', () => {
    const bmp = fc
      .integer({ min: 0, max: 0xffff })
      .filter((c) => c < 0xd800 || c > 0xdfff)
      .map((c) => String.fromCharCode(c));
    fc.assert(
      fc.property(
        fc
          .uniqueArray(bmp, { minLength: 1, maxLength: 247 })
          .chain((chars) =>
            fc.tuple(
              fc.constant(chars.join('')),
              fc.array(fc.constantFrom(...chars, ...SPECIAL_TOKENS.slice(1)), { maxLength: 40 }),
            ),
          ),
        ([chars, parts]) => {
          const t = CharTokenizer.fromSpec(spec(chars));
          expect(t.vocabSize).toBe(9 + chars.length);
          const text = parts.join('');
          const ids = t.encode(text);
          expect(t.decode(ids)).toBe(text);
          expect(ids.includes(t.pad)).toBe(false);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('names an unknown character, its code point and its index', () => {
    expect(() => tok.encode('abcX')).toThrow(TokenizerError);
    expect(() => tok.encode('abcX')).toThrow(
      /text index 3: character "X" \(U\+0058\) is not in the tokenizer's alphabet/,
    );
    expect(() => tok.encode('1 😀')).toThrow(/index 2: character "😀" \(U\+1F600\)/);
    expect(() => tok.encode('\t')).toThrow(/index 0: character "\\t" \(U\+0009\)/);
  });

  it.each([
    ['above the range', [9, 79], /ids index 1: id must be an integer in \[0, 78\], got 79/],
    ['negative', [-1], /ids index 0: id must be an integer in \[0, 78\], got -1/],
    ['fractional', [3, 1.5], /ids index 1: .* got 1.5/],
    ['NaN', [NaN], /ids index 0: .* got NaN/],
  ])('rejects ids %s', (_name, ids, message) => {
    expect(() => tok.decode(ids)).toThrow(message);
  });

  it.each([
    [
      'a duplicate',
      spec('abca'),
      /spec.chars index 3: duplicate character "a" \(U\+0061\), first at index 0/,
    ],
    ['a surrogate pair', spec('a😀'), /spec.chars index 1: surrogate code unit U\+D83D/],
    ['a lone surrogate', spec('\udc00'), /index 0: surrogate code unit U\+DC00/],
    ['no characters', spec(''), /spec.chars must hold 1–247 characters .* got 0/],
    [
      '248 characters',
      spec(String.fromCharCode(...Array.from({ length: 248 }, (_, i) => 0x100 + i))),
      /got 248/,
    ],
    [
      'another kind',
      { kind: 'bpe', version: 1, chars: 'a' },
      /spec.kind must be 'char', got "bpe"/,
    ],
    ['another version', { kind: 'char', version: 2, chars: 'a' }, /spec.version must be 1, got 2/],
    ['chars not a string', { kind: 'char', version: 1, chars: 5 }, /spec.chars must be a string/],
  ])('rejects a spec with %s', (_name, bad, message) => {
    expect(() => CharTokenizer.fromSpec(bad as unknown as TokenizerSpec)).toThrow(message);
  });

  it('accepts the largest vocabulary, 247 characters + 9 specials = 256 ids', () => {
    const chars = String.fromCharCode(...Array.from({ length: 247 }, (_, i) => 0x100 + i));
    const t = CharTokenizer.fromSpec(spec(chars));
    expect(t.vocabSize).toBe(256);
    expect(t.encode(chars.slice(-1))[0]).toBe(255);
  });
});
