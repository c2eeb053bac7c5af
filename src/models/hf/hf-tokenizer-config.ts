/**
 * Fields of tokenizer_config.json and generation_config.json that the tokenizer needs: the special
 * token strings, the chat template(s), the decode clean-up flag and the generation's eos ids.
 * Each reader checks only its field, so a file with fields for other tools still loads.
 */

import { HfTokenizerError, shown, type TokenizerFileName } from './hf-tokenizer-error';
import { errorText } from '../../util/error-text';

/** The special-token fields of tokenizer_config.json that chat templates see as variables. */
export const SPECIAL_TOKEN_FIELDS = ['bos_token', 'eos_token', 'pad_token', 'unk_token'] as const;
export type SpecialTokenField = (typeof SPECIAL_TOKEN_FIELDS)[number];

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A file's text: bytes must be UTF-8 (a leading byte-order mark is dropped, as JSON readers do). */
export function fileText(file: TokenizerFileName, content: Uint8Array | string): string {
  if (typeof content === 'string') return content;
  try {
    return utf8.decode(content);
  } catch {
    throw new HfTokenizerError(file, '', 'is not UTF-8 text');
  }
}

/** A JSON file whose top level must be an object. */
export function parseJsonObject(file: TokenizerFileName, text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = errorText(error);
    throw new HfTokenizerError(file, '', `is not valid JSON (${reason.slice(0, 200)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HfTokenizerError(file, '', `must hold a JSON object, got ${shown(value)}`);
  }
  return value as Record<string, unknown>;
}

/**
 * A special token's text: a string, or an object with a string `content` (how older files store
 * an AddedToken); null or absent is "none".
 */
export function specialTokenText(
  config: Record<string, unknown>,
  field: string,
): string | undefined {
  return tokenText(Object.hasOwn(config, field) ? config[field] : undefined, field);
}

/** additional_special_tokens: a list of token texts (strings or AddedToken objects). */
export function additionalSpecialTokens(config: Record<string, unknown>): string[] {
  const field = 'additional_special_tokens';
  const value = Object.hasOwn(config, field) ? config[field] : undefined;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    throw new HfTokenizerError(
      'tokenizer_config.json',
      field,
      `must be a list, got ${shown(value)}`,
    );
  }
  return value.map((item: unknown, i) => {
    const text = tokenText(item, `${field}[${i}]`);
    if (text === undefined) {
      throw new HfTokenizerError('tokenizer_config.json', `${field}[${i}]`, 'must not be null');
    }
    return text;
  });
}

function tokenText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const content = (value as Record<string, unknown>)['content'];
    if (typeof content === 'string' && content.length > 0) return content;
  }
  throw new HfTokenizerError(
    'tokenizer_config.json',
    field,
    `must be a non-empty string, null or an object with a string "content", got ${shown(value)}`,
  );
}

/** clean_up_tokenization_spaces (removes the space before "." "," "'s" … when decoding). */
export function cleanUpSpaces(config: Record<string, unknown>): boolean {
  const field = 'clean_up_tokenization_spaces';
  const value = Object.hasOwn(config, field) ? config[field] : undefined;
  // Absent: false, as in current `transformers` (decode(encode(s)) === s for byte-level models).
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') {
    throw new HfTokenizerError(
      'tokenizer_config.json',
      field,
      `must be a boolean, got ${shown(value)}`,
    );
  }
  return value;
}

/**
 * The chat templates by name: `chat_template` is one template (named 'default') or a list of
 * { name, template }. A chat_template.jinja beside the file replaces it (newer models keep the
 * template there). Empty where the model has none.
 */
export function chatTemplates(
  config: Record<string, unknown>,
  jinjaFile: string | undefined,
): Map<string, { file: TokenizerFileName; field: string; source: string }> {
  const templates = new Map<string, { file: TokenizerFileName; field: string; source: string }>();
  if (jinjaFile !== undefined) {
    templates.set('default', { file: 'chat_template.jinja', field: '', source: jinjaFile });
    return templates;
  }
  const file = 'tokenizer_config.json';
  const value = Object.hasOwn(config, 'chat_template') ? config['chat_template'] : undefined;
  if (value === undefined || value === null) return templates;
  if (typeof value === 'string') {
    templates.set('default', { file, field: 'chat_template', source: value });
    return templates;
  }
  if (!Array.isArray(value)) {
    throw new HfTokenizerError(
      file,
      'chat_template',
      `must be a string or a list of named templates, got ${shown(value)}`,
    );
  }
  value.forEach((item: unknown, i) => {
    const field = `chat_template[${i}]`;
    const entry =
      typeof item === 'object' && item !== null && !Array.isArray(item)
        ? (item as Record<string, unknown>)
        : undefined;
    const name = entry?.['name'];
    const source = entry?.['template'];
    if (typeof name !== 'string' || typeof source !== 'string') {
      throw new HfTokenizerError(
        file,
        field,
        `must be an object with a string "name" and a string "template", got ${shown(item)}`,
      );
    }
    if (templates.has(name)) {
      throw new HfTokenizerError(file, `${field}.name`, `repeats the name ${shown(name)}`);
    }
    templates.set(name, { file, field: `${field}.template`, source });
  });
  return templates;
}

/**
 * generation_config.json's eos_token_id (an integer or a list of them; absent or null: none),
 * each in [0, vocabSize − 1].
 */
export function generationEosIds(config: Record<string, unknown>, vocabSize: number): number[] {
  const field = 'eos_token_id';
  const value = Object.hasOwn(config, field) ? config[field] : undefined;
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  return list.map((id, i) => {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new HfTokenizerError(
        'generation_config.json',
        Array.isArray(value) ? `${field}[${i}]` : field,
        `must be an integer in [0, ${vocabSize - 1}] (the tokenizer's ids), got ${shown(id)}`,
      );
    }
    return id;
  });
}
