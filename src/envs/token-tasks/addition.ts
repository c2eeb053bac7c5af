/**
 * Add two whole numbers: "12+345=" → "357". The digit count of the operands sets the difficulty
 * (carries reach further). Optionally the answer is written least significant digit first
 * ("12+345=" → "753"), the order in which carries are computed, which small transformers learn
 * far more easily.
 *
 * Prompt: a, '+', b, '='. Each operand has a digit count drawn uniformly from [minDigits,
 * maxDigits] and no leading zeros (a one-digit operand may be 0). Answer: the sum in decimal
 * without leading zeros (reversed if asked). Only that exact string scores 1: "0357" or " 357"
 * score 0, since writing the number in the task's format is part of the task.
 */
import { checkInt } from '../../ops/validate';
import { OpInputError } from '../../ops/errors';
import { randomInt, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface AdditionOptions {
  /** Fewest digits of an operand, 1 ≤ minDigits ≤ maxDigits. Default 1. */
  minDigits?: number;
  /** Most digits of an operand, ≤ 20 (sums are exact: added digit by digit). Default 2. */
  maxDigits?: number;
  /** Write the sum least significant digit first. Default false. */
  reverseAnswer?: boolean;
}

export const DEFAULT_ADDITION_OPTIONS: Readonly<Required<AdditionOptions>> = Object.freeze({
  minDigits: 1,
  maxDigits: 2,
  reverseAnswer: false,
});

/** Curriculum rungs, easiest first: more digits, so longer carry chains. */
export const additionDifficultyLevels: readonly Readonly<Required<AdditionOptions>>[] = [
  { minDigits: 1, maxDigits: 1, reverseAnswer: false },
  { minDigits: 1, maxDigits: 2, reverseAnswer: false },
  { minDigits: 2, maxDigits: 3, reverseAnswer: false },
  { minDigits: 3, maxDigits: 5, reverseAnswer: false },
  { minDigits: 5, maxDigits: 8, reverseAnswer: false },
];

const DIGITS = '0123456789';

/** The decimal sum of two digit strings (no signs), digit by digit: exact at any length. */
export function addDecimal(a: string, b: string): string {
  for (const [field, s] of [
    ['a', a],
    ['b', b],
  ] as const) {
    if (!/^[0-9]+$/.test(s)) {
      throw new OpInputError('addDecimal', field, `must be one or more digits, got "${s}"`);
    }
  }
  let out = '';
  let carry = 0;
  for (let i = a.length - 1, j = b.length - 1; i >= 0 || j >= 0 || carry > 0; i--, j--) {
    const sum = (i >= 0 ? a.charCodeAt(i) - 48 : 0) + (j >= 0 ? b.charCodeAt(j) - 48 : 0) + carry;
    out = String(sum % 10) + out;
    carry = sum >= 10 ? 1 : 0;
  }
  return out.replace(/^0+(?=\d)/, '');
}

/** A number with exactly `digits` digits, uniform over them (0–9 for one digit). */
function randomOperand(random: () => number, digits: number): string {
  let text = digits === 1 ? '' : DIGITS[randomInt(random, 1, 9)]!;
  while (text.length < digits) text += DIGITS[randomInt(random, 0, 9)]!;
  return text;
}

export function additionTask(options: AdditionOptions = {}): CharsetTask {
  const { minDigits, maxDigits, reverseAnswer } = withDefaults(DEFAULT_ADDITION_OPTIONS, options);
  checkInt('additionTask', 'maxDigits', maxDigits, 1, 20);
  checkInt('additionTask', 'minDigits', minDigits, 1, maxDigits);
  if (typeof reverseAnswer !== 'boolean') {
    throw new OpInputError(
      'additionTask',
      'reverseAnswer',
      `must be true or false, got ${String(reverseAnswer)}`,
    );
  }
  return {
    name: `addition(${minDigits}–${maxDigits} digits${reverseAnswer ? ', reversed' : ''})`,
    // "a+b=" with a, b ≤ maxDigits digits, and a sum of ≤ maxDigits + 1 digits.
    maxChars: 3 * maxDigits + 3,
    answerChars: DIGITS,
    sample(random: () => number): TokenTaskSample {
      const a = randomOperand(random, randomInt(random, minDigits, maxDigits));
      const b = randomOperand(random, randomInt(random, minDigits, maxDigits));
      const sum = addDecimal(a, b);
      return {
        prompt: `${a}+${b}=`,
        answer: reverseAnswer ? [...sum].reverse().join('') : sum,
      };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      return completion === sample.answer ? 1 : 0;
    },
  };
}
