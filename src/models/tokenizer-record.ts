/**
 * Reads a TokenizerRecord (what a checkpoint or run file stores for its tokenizer) from untrusted
 * JSON: a character tokenizer's record is checked by rebuilding the tokenizer; a Hugging Face
 * one names its source and the SHA-256 of its tokenizer.json (the files themselves are not here).
 */
import { CharTokenizer, TokenizerError, type TokenizerSpec } from './tokenizer';
import type { TokenizerRecord } from './tokenizer-api';

/** Longest `source` of an 'hf' record: a Hub id or a folder name, never a file's contents. */
export const MAX_TOKENIZER_SOURCE = 256;

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** A fresh, checked copy of the record; TokenizerError naming the field ('spec.sha256', …). */
export function readTokenizerRecord(value: unknown): TokenizerRecord {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenizerError('spec', `must be an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  if (record.kind === 'char')
    return CharTokenizer.fromSpec(record as unknown as TokenizerSpec).spec;
  if (record.kind !== 'hf') {
    throw new TokenizerError('spec.kind', `must be 'char' or 'hf', got ${describe(record.kind)}`);
  }
  if (record.version !== 1) {
    throw new TokenizerError('spec.version', `must be 1, got ${describe(record.version)}`);
  }
  const { source, sha256 } = record;
  if (typeof source !== 'string' || source.length < 1 || source.length > MAX_TOKENIZER_SOURCE) {
    throw new TokenizerError(
      'spec.source',
      `must be a string of 1–${MAX_TOKENIZER_SOURCE} characters (a Hub id or folder name), got ${describe(source)}`,
    );
  }
  if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) {
    throw new TokenizerError(
      'spec.sha256',
      `must be 64 lowercase hex digits (the SHA-256 of tokenizer.json), got ${describe(sha256)}`,
    );
  }
  return Object.freeze({ kind: 'hf', version: 1, source, sha256 });
}

function describe(value: unknown): string {
  if (typeof value === 'string')
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (value === null || Array.isArray(value)) return value === null ? 'null' : 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
