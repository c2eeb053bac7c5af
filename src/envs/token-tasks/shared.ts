/**
 * Pieces the token tasks share: the alphabet check, seeded integer and string draws, and the
 * task shape that also names the characters a well-formed answer uses (for the format reward).
 */
import { CharTokenizer } from '../../models/tokenizer';
import { OpInputError } from '../../ops/errors';
import type { TokenTask } from './types';

/** A token task that also says which characters its answers are written in. */
export interface CharsetTask extends TokenTask {
  /**
   * Every character a well-formed answer may contain (the format reward checks completions
   * against it). A correct answer always passes; a passing answer need not be correct.
   */
  readonly answerChars: string;
}

/**
 * Alphabets the registry offers for the string tasks (a ConfigSpec choice field): small ones
 * learn fast, bigger ones make the task harder. A task factory accepts any other alphabet too.
 */
export const ALPHABET_PRESETS = [
  'abcde',
  'abcdefghij',
  'abcdefghijklmnopqrstuvwxyz',
  '01234',
  '0123456789',
] as const;

/** Largest alphabet a string task accepts. */
export const MAX_ALPHABET = 64;

/**
 * `alphabet` must be 1–64 distinct characters of the default tokenizer's alphabet, and must not
 * contain newline, '<' (special tokens such as "<eos>" start with it, so letters after a '<'
 * could spell one) or any of `reserved` (the task's separators: a prompt must read one way only).
 */
export function checkAlphabet(op: string, alphabet: string, reserved: string): void {
  if (typeof alphabet !== 'string' || alphabet.length < 1 || alphabet.length > MAX_ALPHABET) {
    const got = typeof alphabet === 'string' ? `${alphabet.length} characters` : typeof alphabet;
    throw new OpInputError(op, 'alphabet', `must hold 1–${MAX_ALPHABET} characters, got ${got}`);
  }
  const banned = `\n<${reserved}`;
  for (let i = 0; i < alphabet.length; i++) {
    const c = alphabet[i]!;
    const shown = JSON.stringify(c);
    if (!CharTokenizer.DEFAULT_CHARS.includes(c)) {
      throw new OpInputError(
        op,
        'alphabet',
        `index ${i}: ${shown} is not in the default tokenizer's alphabet (newline, space, ` +
          `punctuation, digits, a–z)`,
      );
    }
    if (banned.includes(c)) {
      throw new OpInputError(
        op,
        'alphabet',
        `index ${i}: ${shown} is reserved (newline, '<' and the task's separators ` +
          `${JSON.stringify(reserved)} may not appear in the strings)`,
      );
    }
    const first = alphabet.indexOf(c);
    if (first !== i) {
      throw new OpInputError(
        op,
        'alphabet',
        `index ${i}: duplicate character ${shown}, first at index ${first}`,
      );
    }
  }
}

/** An integer uniform in [min, max] (one draw from `random`, values in [0, 1)). */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * A string of uniform length in [minLength, maxLength] whose characters are uniform over
 * `alphabet`: one draw for the length, then one per character.
 */
export function randomString(
  random: () => number,
  alphabet: string,
  minLength: number,
  maxLength: number,
): string {
  const length = randomInt(random, minLength, maxLength);
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

/** `options` over `defaults`, where a field left out or set to undefined takes the default. */
export function withDefaults<O extends object>(
  defaults: Readonly<Required<O>>,
  options: O,
): Required<O> {
  const out = { ...defaults } as Required<O>;
  for (const key of Object.keys(options) as (keyof O)[]) {
    const value = options[key];
    if (value !== undefined) out[key] = value as Required<O>[keyof O];
  }
  return out;
}
