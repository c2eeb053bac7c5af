/**
 * Reverse a string: "abc=" → "cba". The first rung of the token-task ladder; length sets the
 * difficulty (a policy must attend back across the prompt, position by position).
 */
import { checkInt } from '../../ops/validate';
import type { TokenTask, TokenTaskSample } from './types';

export interface ReverseOptions {
  /** Shortest string, 1 ≤ minLength ≤ maxLength. Default 3. */
  minLength?: number;
  /** Longest string, ≤ 32. Default 6. */
  maxLength?: number;
  /** Characters the strings are drawn from. Default a–e (a small alphabet learns fast). */
  alphabet?: string;
}

export function reverseTask(options: ReverseOptions = {}): TokenTask {
  const minLength = options.minLength ?? 3;
  const maxLength = options.maxLength ?? 6;
  const alphabet = options.alphabet ?? 'abcde';
  checkInt('reverseTask', 'maxLength', maxLength, 1, 32);
  checkInt('reverseTask', 'minLength', minLength, 1, maxLength);
  checkInt('reverseTask', 'alphabet.length', alphabet.length, 1, 64);
  return {
    name: `reverse(${minLength}–${maxLength})`,
    maxChars: 2 * maxLength + 1,
    sample(random: () => number): TokenTaskSample {
      const length = minLength + Math.floor(random() * (maxLength - minLength + 1));
      let text = '';
      for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
      return { prompt: `${text}=`, answer: [...text].reverse().join('') };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      return completion === sample.answer ? 1 : 0;
    },
  };
}
