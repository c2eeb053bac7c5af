/**
 * Errors in a model's tokenizer files: each names the file and the field, and quotes the value it
 * found cut short (the files are untrusted and may hold megabytes in one field).
 */

import { describeValue } from '../../util/json-checks';

export type TokenizerFileName =
  'tokenizer.json' | 'tokenizer_config.json' | 'generation_config.json' | 'chat_template.jinja';

export class HfTokenizerError extends Error {
  override readonly name = 'HfTokenizerError';
  constructor(
    readonly file: TokenizerFileName,
    /** The field's path in the file ('model.merges[12]', 'eos_token'); '' for the whole file. */
    readonly field: string,
    /** What is wrong, e.g. 'must be a string, got 3'. */
    readonly problem: string,
  ) {
    super(field ? `${file}: ${field} ${problem}` : `${file}: ${problem}`);
  }
}

/** A found value for a message, strings cut to a few dozen characters. */
export function shown(value: unknown): string {
  return describeValue(value);
}

/** Text for a message (a token, a merge), JSON-quoted so that invisible characters show, cut. */
export function quoted(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max - 1)}…` : text);
}
