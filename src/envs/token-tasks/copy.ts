/**
 * Copy a string: "abc:" → "abc". The easiest rung (below reverse): the answer repeats the prompt
 * in order, so a policy only has to look back a fixed distance. Length sets the difficulty.
 *
 * Prompt: the string, then ':'. Answer: the same string. Only the exact answer scores 1.
 */
import { checkInt } from '../../ops/validate';
import { checkAlphabet, randomString, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface CopyOptions {
  /** Shortest string, 1 ≤ minLength ≤ maxLength. Default 3. */
  minLength?: number;
  /** Longest string, ≤ 32. Default 6. */
  maxLength?: number;
  /**
   * Characters the strings are drawn from: 1–64 distinct characters of the default tokenizer,
   * without newline, '<' or ':'. Default a–e.
   */
  alphabet?: string;
}

export const DEFAULT_COPY_OPTIONS: Readonly<Required<CopyOptions>> = Object.freeze({
  minLength: 3,
  maxLength: 6,
  alphabet: 'abcde',
});

/** Curriculum rungs, easiest first: longer strings, then bigger alphabets. */
export const copyDifficultyLevels: readonly Readonly<Required<CopyOptions>>[] = [
  { minLength: 1, maxLength: 3, alphabet: 'abcde' },
  { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  { minLength: 5, maxLength: 10, alphabet: 'abcdefghij' },
  { minLength: 8, maxLength: 16, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
  { minLength: 12, maxLength: 32, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
];

export function copyTask(options: CopyOptions = {}): CharsetTask {
  const { minLength, maxLength, alphabet } = withDefaults(DEFAULT_COPY_OPTIONS, options);
  checkInt('copyTask', 'maxLength', maxLength, 1, 32);
  checkInt('copyTask', 'minLength', minLength, 1, maxLength);
  checkAlphabet('copyTask', alphabet, ':');
  return {
    name: `copy(${minLength}–${maxLength})`,
    maxChars: 2 * maxLength + 1,
    answerChars: alphabet,
    sample(random: () => number): TokenTaskSample {
      const text = randomString(random, alphabet, minLength, maxLength);
      return { prompt: `${text}:`, answer: text };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      return completion === sample.answer ? 1 : 0;
    },
  };
}
