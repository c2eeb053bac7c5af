/**
 * Character-level tokenizer with special tokens, for the tiny transformer policies.
 *
 * Ids: the special tokens take 0…8 in SPECIAL_TOKENS order (PAD = 0), then one id per ordinary
 * character in `spec.chars` order. A vocabulary is at most 256 ids, so a token fits in a byte and
 * TransformerConfig.vocab (2–256) covers every tokenizer.
 *
 * Encoding reads special token strings such as "<call>" in the text as one token (agent
 * transcripts are written as text), every other UTF-16 code unit as one character. "<pad>" is the
 * exception: padding comes from batching, never from text, so "<pad>" in text is read as the five
 * characters '<' 'p' 'a' 'd' '>' (an error if they are not in the alphabet). decode(encode(s)) === s
 * for every string s that encodes; encode(decode(ids)) need not give back ids (the characters
 * '<' 'c' 'a' 'l' 'l' '>' decode to text that re-encodes as the single token <call>).
 */

import type { Tokenizer, TokenizerRecord } from './tokenizer-api';

export const SPECIAL_TOKENS = [
  '<pad>',
  '<bos>',
  '<eos>',
  '<call>',
  '</call>',
  '<result>',
  '</result>',
  '<answer>',
  '</answer>',
] as const;

export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

/**
 * What checkpoints and run files store to rebuild a character tokenizer: the 'char' kind of
 * TokenizerRecord (character i of `chars` has id SPECIAL_TOKENS.length + i).
 */
export type TokenizerSpec = Extract<TokenizerRecord, { kind: 'char' }>;

/** Largest vocabulary (specials + characters): token ids fit in a byte. */
export const MAX_VOCAB = 256;

/** Bad text, ids or spec; `field` names the input ('text', 'ids', 'spec.chars', …). */
export class TokenizerError extends Error {
  override readonly name = 'TokenizerError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`tokenizer: ${field} ${message}`);
  }
}

/**
 * The default alphabet: newline, then printable ASCII (0x20–0x7E) without the capital letters, in
 * code order — space, all 32 punctuation marks, digits and a–z: 70 characters, 79 ids in all.
 * Enough for arithmetic, key lookup and search tasks; lowercase only keeps the vocabulary small.
 */
const DEFAULT_CHARS: string = (() => {
  let chars = '\n';
  for (let c = 0x20; c <= 0x7e; c++) {
    if (c < 0x41 || c > 0x5a) chars += String.fromCharCode(c);
  }
  return chars;
})();

/** One UTF-16 code unit → its id (or −1), for any code unit. Built once per tokenizer. */
const UNKNOWN = -1;

export class CharTokenizer implements Tokenizer {
  static readonly DEFAULT_CHARS: string = DEFAULT_CHARS;

  readonly spec: TokenizerSpec;
  readonly vocabSize: number;
  readonly special: Readonly<Record<SpecialToken, number>>;
  readonly pad: number;
  readonly bos: number;
  readonly eos: number;
  /** Generation stops at <eos>. */
  readonly stopIds: readonly number[];

  // charIds: (65536) code unit → id or −1; tokens: (vocabSize) id → its text.
  private readonly charIds: Int16Array;
  private readonly tokens: readonly string[];

  private constructor(chars: string) {
    this.spec = Object.freeze({ kind: 'char', version: 1, chars });
    this.vocabSize = SPECIAL_TOKENS.length + chars.length;
    const special = {} as Record<SpecialToken, number>;
    SPECIAL_TOKENS.forEach((token, id) => (special[token] = id));
    this.special = Object.freeze(special);
    this.pad = special['<pad>'];
    this.bos = special['<bos>'];
    this.eos = special['<eos>'];
    this.stopIds = Object.freeze([this.eos]);
    this.charIds = new Int16Array(0x10000).fill(UNKNOWN);
    for (let i = 0; i < chars.length; i++) {
      this.charIds[chars.charCodeAt(i)] = SPECIAL_TOKENS.length + i;
    }
    this.tokens = [...SPECIAL_TOKENS, ...chars];
  }

  /** Checks the spec (kind, version, no duplicate or surrogate characters, ≤ 256 ids in all). */
  static fromSpec(spec: TokenizerSpec): CharTokenizer {
    checkSpec(spec);
    return new CharTokenizer(spec.chars);
  }

  /** The tokenizer over DEFAULT_CHARS. */
  static createDefault(): CharTokenizer {
    return new CharTokenizer(DEFAULT_CHARS);
  }

  /**
   * Text → ids. Special token strings (except "<pad>") become their id; every other code unit
   * must be in the alphabet, else TokenizerError naming the character, its code point and index.
   */
  encode(text: string): Int32Array {
    if (typeof text !== 'string') {
      throw new TokenizerError('text', `must be a string, got ${typeof text}`);
    }
    const ids = new Int32Array(text.length); // never more tokens than code units
    let n = 0;
    for (let i = 0; i < text.length;) {
      const special = text.charCodeAt(i) === 0x3c /* '<' */ ? this.matchSpecial(text, i) : -1;
      if (special >= 0) {
        ids[n++] = special;
        i += this.tokens[special]!.length;
        continue;
      }
      const id = this.charIds[text.charCodeAt(i)]!;
      if (id === UNKNOWN) throw unknownCharacter(text, i);
      ids[n++] = id;
      i++;
    }
    return ids.slice(0, n);
  }

  /**
   * Ids → text. Special tokens print as their string unless `skipSpecial` (then they are left
   * out, PAD included). An id that is not an integer in [0, vocabSize − 1] is an error naming its
   * index.
   */
  decode(ids: ArrayLike<number>, options: { skipSpecial?: boolean } = {}): string {
    const skip = options.skipSpecial ?? false;
    const parts: string[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new TokenizerError(
          'ids',
          `index ${i}: id must be an integer in [0, ${this.vocabSize - 1}], got ${id}`,
        );
      }
      if (skip && id < SPECIAL_TOKENS.length) continue;
      parts.push(this.tokens[id]!);
    }
    return parts.join('');
  }

  /** True for the ids of SPECIAL_TOKENS (0…8). */
  isSpecial(id: number): boolean {
    return Number.isInteger(id) && id >= 0 && id < SPECIAL_TOKENS.length;
  }

  /** The text of one id (a character or a special token string), e.g. for showing tokens. */
  token(id: number): string {
    const text = Number.isInteger(id) ? this.tokens[id] : undefined;
    if (text === undefined) {
      throw new TokenizerError('id', `must be an integer in [0, ${this.vocabSize - 1}], got ${id}`);
    }
    return text;
  }

  /** The special token (other than PAD) that starts at text[i], as its id; −1 if none. */
  private matchSpecial(text: string, i: number): number {
    // No special token is a prefix of another ('<call>' vs '</call>' differ at index 1).
    for (let id = 1; id < SPECIAL_TOKENS.length; id++) {
      if (text.startsWith(SPECIAL_TOKENS[id]!, i)) return id;
    }
    return -1;
  }
}

function checkSpec(spec: TokenizerSpec): void {
  if (typeof spec !== 'object' || spec === null) {
    throw new TokenizerError(
      'spec',
      `must be an object, got ${spec === null ? 'null' : typeof spec}`,
    );
  }
  if (spec.kind !== 'char') {
    throw new TokenizerError('spec.kind', `must be 'char', got ${JSON.stringify(spec.kind)}`);
  }
  if (spec.version !== 1) {
    throw new TokenizerError('spec.version', `must be 1, got ${JSON.stringify(spec.version)}`);
  }
  const chars: unknown = spec.chars;
  if (typeof chars !== 'string') {
    throw new TokenizerError('spec.chars', `must be a string, got ${typeof chars}`);
  }
  const maxChars = MAX_VOCAB - SPECIAL_TOKENS.length;
  if (chars.length < 1 || chars.length > maxChars) {
    throw new TokenizerError(
      'spec.chars',
      `must hold 1–${maxChars} characters (${MAX_VOCAB} ids with the ${SPECIAL_TOKENS.length} ` +
        `special tokens), got ${chars.length}`,
    );
  }
  const seen = new Map<number, number>();
  for (let i = 0; i < chars.length; i++) {
    const code = chars.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdfff) {
      throw new TokenizerError(
        'spec.chars',
        `index ${i}: surrogate code unit ${codePoint(code)} is not allowed (characters outside ` +
          `the Basic Multilingual Plane do not fit one id)`,
      );
    }
    const first = seen.get(code);
    if (first !== undefined) {
      throw new TokenizerError(
        'spec.chars',
        `index ${i}: duplicate character ${describe(code)}, first at index ${first}`,
      );
    }
    seen.set(code, i);
  }
}

function unknownCharacter(text: string, index: number): TokenizerError {
  const code = text.codePointAt(index)!;
  return new TokenizerError(
    'text',
    `index ${index}: character ${describe(code)} is not in the tokenizer's alphabet`,
  );
}

/** e.g. `"A" (U+0041)`, `"\n" (U+000A)`: JSON quoting shows invisible characters. */
function describe(code: number): string {
  return `${JSON.stringify(String.fromCodePoint(code))} (${codePoint(code)})`;
}

function codePoint(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}
