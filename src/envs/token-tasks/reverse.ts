/**
 * Reverse a string: "abc=" → "cba". The first rung of the token-task ladder; length sets the
 * difficulty (a policy must attend back across the prompt, position by position).
 *
 * Prompt: the string, then '='. Answer: the string backwards. Only the exact answer scores 1.
 */
import { checkInt } from '../../ops/validate';
import { checkAlphabet, randomString, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface ReverseOptions {
  /** Shortest string, 1 ≤ minLength ≤ maxLength. Default 3. */
  minLength?: number;
  /** Longest string, ≤ 32. Default 6. */
  maxLength?: number;
  /**
   * Characters the strings are drawn from: 1–64 distinct characters of the default tokenizer,
   * without newline, '<' or '='. Default a–e (a small alphabet learns fast).
   */
  alphabet?: string;
}

export const DEFAULT_REVERSE_OPTIONS: Readonly<Required<ReverseOptions>> = Object.freeze({
  minLength: 3,
  maxLength: 6,
  alphabet: 'abcde',
});

/** Curriculum rungs, easiest first: longer strings, then bigger alphabets. */
export const reverseDifficultyLevels: readonly Readonly<Required<ReverseOptions>>[] = [
  { minLength: 1, maxLength: 3, alphabet: 'abcde' },
  { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  { minLength: 5, maxLength: 10, alphabet: 'abcdefghij' },
  { minLength: 8, maxLength: 16, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
  { minLength: 12, maxLength: 24, alphabet: 'abcdefghijklmnopqrstuvwxyz' },
];

export function reverseTask(options: ReverseOptions = {}): CharsetTask {
  const { minLength, maxLength, alphabet } = withDefaults(DEFAULT_REVERSE_OPTIONS, options);
  checkInt('reverseTask', 'maxLength', maxLength, 1, 32);
  checkInt('reverseTask', 'minLength', minLength, 1, maxLength);
  checkAlphabet('reverseTask', alphabet, '=');
  return {
    name: `reverse(${minLength}–${maxLength})`,
    maxChars: 2 * maxLength + 1,
    answerChars: alphabet,
    sample(random: () => number): TokenTaskSample {
      const text = randomString(random, alphabet, minLength, maxLength);
      return { prompt: `${text}=`, answer: [...text].reverse().join('') };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      return completion === sample.answer ? 1 : 0;
    },
  };
}
