/**
 * Sort the characters of a string: "cab:" → "abc", "3121:" → "1123" (letters or digits). Harder
 * than copy and reverse: each answer position depends on the whole prompt (a counting problem).
 * Length and alphabet size set the difficulty.
 *
 * Prompt: the string, then ':'. Answer: its characters in ascending code order (digits before
 * letters; repeats kept). Only the exact answer scores 1.
 */
import { checkInt } from '../../ops/validate';
import { checkAlphabet, randomString, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface SortOptions {
  /** Shortest string, 1 ≤ minLength ≤ maxLength. Default 3. */
  minLength?: number;
  /** Longest string, ≤ 32. Default 6. */
  maxLength?: number;
  /**
   * Characters the strings are drawn from, e.g. 'abcde' or '0123456789': 1–64 distinct
   * characters of the default tokenizer, without newline, '<' or ':'. Default a–e.
   */
  alphabet?: string;
}

export const DEFAULT_SORT_OPTIONS: Readonly<Required<SortOptions>> = Object.freeze({
  minLength: 3,
  maxLength: 6,
  alphabet: 'abcde',
});

/** Curriculum rungs, easiest first: digits, then longer strings over more letters. */
export const sortDifficultyLevels: readonly Readonly<Required<SortOptions>>[] = [
  { minLength: 2, maxLength: 3, alphabet: '01234' },
  { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  { minLength: 4, maxLength: 8, alphabet: '0123456789' },
  { minLength: 6, maxLength: 12, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
  { minLength: 10, maxLength: 20, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
];

/** The characters of `text` in ascending UTF-16 code order. */
export function sortChars(text: string): string {
  return [...text].sort((a, b) => a.charCodeAt(0) - b.charCodeAt(0)).join('');
}

export function sortTask(options: SortOptions = {}): CharsetTask {
  const { minLength, maxLength, alphabet } = withDefaults(DEFAULT_SORT_OPTIONS, options);
  checkInt('sortTask', 'maxLength', maxLength, 1, 32);
  checkInt('sortTask', 'minLength', minLength, 1, maxLength);
  checkAlphabet('sortTask', alphabet, ':');
  return {
    name: `sort(${minLength}–${maxLength}, ${alphabet})`,
    maxChars: 2 * maxLength + 1,
    answerChars: alphabet,
    sample(random: () => number): TokenTaskSample {
      const text = randomString(random, alphabet, minLength, maxLength);
      return { prompt: `${text}:`, answer: sortChars(text) };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      return completion === sample.answer ? 1 : 0;
    },
  };
}
