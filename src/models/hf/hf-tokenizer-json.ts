/**
 * Checks of a tokenizer.json (the Hugging Face `tokenizers` serialization) before the tokenizer
 * library reads it. The library trusts its input: a missing section makes it throw a TypeError, a
 * merge whose result is not in the vocabulary silently drops text, and a byte-level vocabulary
 * that lacks a byte drops every character holding that byte. The Rust library refuses the first
 * two when it loads such a file (MergeTokenOutOfVocabulary); this module does too, names the
 * field, and lists the missing bytes so that encode can name the character it cannot encode.
 */

import { BYTE_TO_CHAR } from './hf-tokenizer-bytes';
import { HfTokenizerError, quoted, shown } from './hf-tokenizer-error';

/** Largest id accepted (real vocabularies have ≤ 262,144 tokens). */
export const MAX_TOKEN_ID = (1 << 22) - 1;

export interface AddedTokenEntry {
  id: number;
  content: string;
  special: boolean;
}

export interface CheckedTokenizerJson {
  /** The file's object with absent optional sections set to null, as the library expects. */
  json: Record<string, unknown>;
  addedTokens: readonly AddedTokenEntry[];
  /** The decoder writes tokens as byte-level text (decoder ByteLevel, alone or in a Sequence). */
  byteLevelDecoder: boolean;
  /**
   * For a byte-level BPE without an unknown token: the bytes whose alphabet character is in
   * neither the vocabulary nor the added tokens (text holding one cannot be encoded). Else empty.
   */
  missingBytes: ReadonlySet<number>;
}

const FILE = 'tokenizer.json';

/** Sections the library reads unconditionally; a file may leave out those it has none of. */
const OPTIONAL_SECTIONS = ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder'] as const;

export function checkTokenizerJson(value: unknown): CheckedTokenizerJson {
  const root = record(value, '');
  const model = record(root['model'], 'model');
  if (typeof model['type'] !== 'string') {
    // The library guesses a type from the fields otherwise; a real file always names it.
    throw new HfTokenizerError(FILE, 'model.type', `must be a string, got ${shown(model['type'])}`);
  }
  const json: Record<string, unknown> = { ...root };
  for (const section of OPTIONAL_SECTIONS) {
    const part = root[section];
    if (part === undefined) json[section] = null;
    else if (part !== null) record(part, section);
  }
  const addedTokens = checkAddedTokens(root['added_tokens']);
  json['added_tokens'] = root['added_tokens'] ?? [];

  let vocab: Vocabulary | undefined;
  if (model['type'] === 'BPE' || model['type'] === 'WordPiece') {
    vocab = checkVocab(model['vocab']);
  }
  if (model['type'] === 'BPE') checkMerges(model['merges'], vocab!, model);

  const missingBytes = new Set<number>();
  const unk = model['unk_token'];
  if (
    model['type'] === 'BPE' &&
    (unk === null || unk === undefined) &&
    model['byte_fallback'] !== true &&
    hasType(root['pre_tokenizer'], 'ByteLevel', 'pretokenizers')
  ) {
    const added = new Set(addedTokens.map((t) => t.content));
    BYTE_TO_CHAR.forEach((char, byte) => {
      if (!Object.hasOwn(vocab!, char) && !added.has(char)) missingBytes.add(byte);
    });
  }
  return {
    json,
    addedTokens,
    byteLevelDecoder: hasType(root['decoder'], 'ByteLevel', 'decoders'),
    missingBytes,
  };
}

function checkAddedTokens(value: unknown): AddedTokenEntry[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new HfTokenizerError(FILE, 'added_tokens', `must be a list, got ${shown(value)}`);
  }
  return value.map((item: unknown, i) => {
    const path = `added_tokens[${i}]`;
    const entry = record(item, path);
    const id = entry['id'];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_TOKEN_ID) {
      throw new HfTokenizerError(
        FILE,
        `${path}.id`,
        `must be an integer in [0, ${MAX_TOKEN_ID}], got ${shown(id)}`,
      );
    }
    const content = entry['content'];
    if (typeof content !== 'string' || content.length === 0) {
      throw new HfTokenizerError(
        FILE,
        `${path}.content`,
        `must be a non-empty string, got ${shown(content)}`,
      );
    }
    const special = entry['special'] ?? false;
    if (typeof special !== 'boolean') {
      throw new HfTokenizerError(
        FILE,
        `${path}.special`,
        `must be a boolean, got ${shown(special)}`,
      );
    }
    return { id, content, special };
  });
}

/** A vocabulary object token → id, checked; looked up with Object.hasOwn (no copy into a Map). */
type Vocabulary = Readonly<Record<string, number>>;

/** BPE and WordPiece vocabularies: an object token → id. */
function checkVocab(value: unknown): Vocabulary {
  const vocab = record(value, 'model.vocab');
  for (const token in vocab) {
    const id = vocab[token];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_TOKEN_ID) {
      throw new HfTokenizerError(
        FILE,
        `model.vocab[${quoted(token)}]`,
        `must be an integer in [0, ${MAX_TOKEN_ID}], got ${shown(id)}`,
      );
    }
  }
  return vocab as Vocabulary;
}

/**
 * Each merge: "a b" (older files) or ["a", "b"]; a, b and their join must be in the vocabulary
 * (the join drops a `continuing_subword_prefix` from b, as the BPE model does).
 */
function checkMerges(value: unknown, vocab: Vocabulary, model: Record<string, unknown>): void {
  if (!Array.isArray(value)) {
    throw new HfTokenizerError(FILE, 'model.merges', `must be a list, got ${shown(value)}`);
  }
  const prefix =
    typeof model['continuing_subword_prefix'] === 'string'
      ? model['continuing_subword_prefix']
      : '';
  // A plain loop, the message built only on failure: real files hold ~150,000 merges.
  for (let i = 0; i < value.length; i++) {
    const merge: unknown = value[i];
    let a: unknown;
    let b: unknown;
    let parts = 0;
    if (typeof merge === 'string') {
      const space = merge.indexOf(' ');
      parts = space < 0 ? 1 : merge.indexOf(' ', space + 1) < 0 ? 2 : 3;
      a = merge.slice(0, space);
      b = merge.slice(space + 1);
    } else if (Array.isArray(merge)) {
      parts = merge.length;
      [a, b] = merge as unknown[];
    }
    if (parts !== 2 || typeof a !== 'string' || typeof b !== 'string') {
      throw new HfTokenizerError(
        FILE,
        `model.merges[${i}]`,
        `must be "a b" or ["a", "b"], got ${shown(merge)}`,
      );
    }
    for (const part of [a, b]) {
      if (!Object.hasOwn(vocab, part)) {
        throw new HfTokenizerError(
          FILE,
          `model.merges[${i}]`,
          `names ${quoted(part)}, which model.vocab lacks`,
        );
      }
    }
    const joined = a + (prefix && b.startsWith(prefix) ? b.slice(prefix.length) : b);
    if (!Object.hasOwn(vocab, joined)) {
      throw new HfTokenizerError(
        FILE,
        `model.merges[${i}]`,
        `makes ${quoted(joined)}, which model.vocab lacks`,
      );
    }
  }
}

/** True if the section is of `type`, or a Sequence (list in `listKey`) holding one of that type. */
function hasType(section: unknown, type: string, listKey: string): boolean {
  if (typeof section !== 'object' || section === null) return false;
  const part = section as Record<string, unknown>;
  if (part['type'] === type) return true;
  const list = part['type'] === 'Sequence' ? part[listKey] : undefined;
  return Array.isArray(list) && list.some((item) => hasType(item, type, listKey));
}

function record(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HfTokenizerError(FILE, path, `must be an object, got ${shown(value)}`);
  }
  return value as Record<string, unknown>;
}
