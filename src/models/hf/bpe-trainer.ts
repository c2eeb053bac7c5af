/**
 * A byte-level BPE trainer: learns merges from a corpus of texts, as GPT-2-style tokenizers are
 * made (Llama 3, Qwen2, SmolLM2), so that the lab can ship a tokenizer of its own in the Hugging
 * Face layout. Deterministic: the same corpus and merge count give the same merges on any
 * machine (counts are integers; ties are broken by the pair's text).
 *
 * Steps:
 * 1. Each text is split into pre-tokens by PRE_TOKENIZER_REGEX (the regex tokenizer.json's Split
 *    pre-tokenizer states, so the library splits exactly so): letters group into words, every
 *    digit stands alone (an addition's digits are never merged: the model sees each digit), and
 *    punctuation, newlines and spaces form their own pieces. Merges never cross a pre-token.
 * 2. Each pre-token becomes its UTF-8 bytes written in the byte-level alphabet (Ġ for a space).
 * 3. Repeatedly, the adjacent pair of symbols that occurs most often over all pre-tokens (weighted
 *    by how often the pre-token occurs) is merged into one new symbol, until `merges` merges are
 *    made or no pair occurs `minFrequency` times.
 *
 * Vocabulary: ids 0–255 are the 256 bytes in byte order (any text can be encoded), then one id
 * per merge in merge order. The special tokens are the caller's to add after these.
 */
import { OpInputError } from '../../ops/errors';
import { checkInt } from '../../ops/validate';
import { BYTE_TO_CHAR } from './hf-tokenizer-bytes';

/**
 * Qwen2's pre-tokenizer regex without its case-insensitive contractions group (a Jinja- and
 * JavaScript-portable form: Node 20's RegExp has no inline (?i:…)): words with at most one
 * leading non-letter, single digits, punctuation runs with trailing newlines, newline runs,
 * spaces.
 */
export const PRE_TOKENIZER_REGEX =
  '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

const PRE_TOKENIZER = new RegExp(PRE_TOKENIZER_REGEX, 'gu');

export interface BpeTrainOptions {
  /** Most merges to learn, in [0, 65,536]. */
  merges: number;
  /** A pair is merged only if it occurs at least this often, ≥ 1. Default 2. */
  minFrequency?: number;
}

export interface TrainedBpe {
  /** Vocabulary in id order: 256 byte tokens, then one token per merge. */
  vocab: string[];
  /** Merges in rank order, each the two tokens joined (as tokenizer.json lists them). */
  merges: [string, string][];
}

/** The pre-tokens of `text`, each in the byte-level alphabet. */
export function preTokenize(text: string): string[] {
  const encoder = new TextEncoder();
  return (text.match(PRE_TOKENIZER) ?? []).map((piece) =>
    Array.from(encoder.encode(piece), (byte) => BYTE_TO_CHAR[byte]!).join(''),
  );
}

/** A pre-token as symbols, with how often it occurs in the corpus. */
interface Word {
  symbols: string[];
  count: number;
}

/** Pair key: the two symbols joined by a character outside the byte-level alphabet. */
const SEP = '\u0000';

/** Learns merges from `texts` (special tokens must already be cut out of them). */
export function trainBpe(texts: readonly string[], options: BpeTrainOptions): TrainedBpe {
  checkInt('trainBpe', 'merges', options.merges, 0, 65_536);
  const minFrequency = options.minFrequency ?? 2;
  checkInt('trainBpe', 'minFrequency', minFrequency, 1, Number.MAX_SAFE_INTEGER);
  if (!Array.isArray(texts)) {
    throw new OpInputError('trainBpe', 'texts', `must be a list of strings, got ${typeof texts}`);
  }
  const counts = new Map<string, number>();
  texts.forEach((text, i) => {
    if (typeof text !== 'string') {
      throw new OpInputError('trainBpe', `texts[${i}]`, `must be a string, got ${typeof text}`);
    }
    for (const token of preTokenize(text)) counts.set(token, (counts.get(token) ?? 0) + 1);
  });
  // Sorted so that the order of the corpus never matters, only its contents.
  const words: Word[] = [...counts.keys()]
    .sort()
    .map((token) => ({ symbols: [...token], count: counts.get(token)! }));

  const vocab = [...BYTE_TO_CHAR];
  const merges: [string, string][] = [];
  while (merges.length < options.merges) {
    const pairs = new Map<string, number>();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = symbols[i]! + SEP + symbols[i + 1]!;
        pairs.set(key, (pairs.get(key) ?? 0) + count);
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, count] of pairs) {
      if (count > bestCount || (count === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = count;
      }
    }
    if (best === undefined || bestCount < minFrequency) break;
    const [left, right] = best.split(SEP) as [string, string];
    const merged = left + right;
    merges.push([left, right]);
    vocab.push(merged);
    for (const word of words) word.symbols = mergePair(word.symbols, left, right, merged);
  }
  return { vocab, merges };
}

/** `symbols` with every left-to-right occurrence of (left, right) replaced by `merged`. */
function mergePair(symbols: string[], left: string, right: string, merged: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < symbols.length; i++) {
    if (i + 1 < symbols.length && symbols[i] === left && symbols[i + 1] === right) {
      out.push(merged);
      i++;
    } else out.push(symbols[i]!);
  }
  return out;
}

/**
 * The token strings of one pre-token under `merges` by BPE's rule: repeatedly apply the merge of
 * lowest rank present among adjacent symbols (leftmost first). The reference the shipped
 * tokenizer.json's encoding is checked against.
 */
export function applyMerges(
  token: string,
  merges: readonly (readonly [string, string])[],
): string[] {
  const rank = new Map(merges.map(([a, b], i) => [a + SEP + b, i]));
  let symbols = [...token];
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const r = rank.get(symbols[i]! + SEP + symbols[i + 1]!);
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) return symbols;
    const [left, right] = merges[bestRank]!;
    symbols = mergePair(symbols, left, right, left + right);
  }
}
