/**
 * Countdown: reach a target from given numbers with + - * / and parentheses, each number used
 * at most once. "3 5 7>26:" → "3*7+5" (or "5+7*3", "(5+7)*3-10"… any expression that works).
 * The verifiable-reward task of TinyZero and many GRPO demos, sized for a tiny model. The count
 * of numbers, their size, the target range and the operators set the difficulty.
 *
 * Prompt: the numbers separated by spaces, '>', the target, ':'. Answer: an expression. The
 * verifier parses it (src/envs/token-tasks/expression.ts: a recursive-descent parser, exact
 * rational arithmetic; never eval) and scores 1 when every number in it is one of the given
 * numbers, none used more often than given, and its value equals the target exactly. Anything
 * else — bad syntax, division by zero, a number not given — scores 0, without throwing.
 *
 * Every instance is solvable by construction: the sampler builds a random expression over the
 * drawn numbers first and takes its value as the target (the reference answer is that
 * expression, printed with the fewest parentheses).
 */
import { OpInputError } from '../../ops/errors';
import { checkInt } from '../../ops/validate';
import {
  ExpressionError,
  evaluateExpression,
  expressionNumbers,
  formatExpression,
  parseExpression,
  type Expr,
  type ExpressionErrorReason,
  type Operator,
} from './expression';
import { randomInt, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface CountdownOptions {
  /** Fewest numbers given, 2 ≤ minCount ≤ maxCount. Default 3. */
  minCount?: number;
  /** Most numbers given, ≤ 6 (the TV game's count). Default 3. */
  maxCount?: number;
  /** Numbers are drawn uniformly from [1, maxValue], 1 ≤ maxValue ≤ 999. Default 9. */
  maxValue?: number;
  /** Targets lie in [1, maxTarget], maxValue ≤ maxTarget ≤ 999. Default 50. */
  maxTarget?: number;
  /**
   * Operators the sampler builds targets with: distinct characters from + - * / written
   * together, e.g. "+-" or "+-*". The verifier accepts all four either way. Default: all four.
   */
  operators?: string;
}

export const DEFAULT_COUNTDOWN_OPTIONS: Readonly<Required<CountdownOptions>> = Object.freeze({
  minCount: 3,
  maxCount: 3,
  maxValue: 9,
  maxTarget: 50,
  operators: '+-*/',
});

/** Curriculum rungs, easiest first: more numbers, bigger values and targets, more operators. */
export const countdownDifficultyLevels: readonly Readonly<Required<CountdownOptions>>[] = [
  { minCount: 2, maxCount: 2, maxValue: 9, maxTarget: 20, operators: '+-' },
  { minCount: 2, maxCount: 3, maxValue: 9, maxTarget: 30, operators: '+-' },
  { minCount: 3, maxCount: 3, maxValue: 9, maxTarget: 50, operators: '+-*' },
  { minCount: 3, maxCount: 4, maxValue: 20, maxTarget: 100, operators: '+-*/' },
  { minCount: 4, maxCount: 4, maxValue: 99, maxTarget: 100, operators: '+-*/' },
];

/** Characters an answer is written in. */
export const COUNTDOWN_ANSWER_CHARS = '0123456789+-*/() ';

/** Random expressions tried per sample before the always-valid fallback. */
const ATTEMPTS = 100;

const PROMPT = /^([0-9]+(?: [0-9]+)*)>([0-9]+):$/;

export type CountdownReason =
  'correct' | 'wrong-value' | 'number-not-available' | ExpressionErrorReason;

export interface CountdownVerdict {
  correct: boolean;
  /** Why: 'correct', 'wrong-value', 'number-not-available' or the parse/evaluation error. */
  reason: CountdownReason;
}

/**
 * Checks an answer: parse, count the numbers against the given multiset, evaluate exactly,
 * compare with the target. Never throws for any `text`.
 */
export function checkCountdownAnswer(
  numbers: readonly number[],
  target: number,
  text: string,
): CountdownVerdict {
  try {
    const expr = parseExpression(text);
    const left = new Map<bigint, number>();
    for (const n of numbers) left.set(BigInt(n), (left.get(BigInt(n)) ?? 0) + 1);
    for (const n of expressionNumbers(expr)) {
      const count = left.get(n) ?? 0;
      if (count === 0) return { correct: false, reason: 'number-not-available' };
      left.set(n, count - 1);
    }
    const value = evaluateExpression(expr);
    const ok = value.den === 1n && value.num === BigInt(target);
    return { correct: ok, reason: ok ? 'correct' : 'wrong-value' };
  } catch (error) {
    if (error instanceof ExpressionError) return { correct: false, reason: error.reason };
    throw error;
  }
}

/** The numbers and target of a countdown prompt such as "3 5 7>26:". */
export function parseCountdownPrompt(prompt: string): { numbers: number[]; target: number } {
  const match = PROMPT.exec(prompt);
  if (!match) {
    throw new OpInputError(
      'countdownTask',
      'sample.prompt',
      `must look like "3 5 7>26:" (numbers, '>', target, ':'), got ${JSON.stringify(prompt)}`,
    );
  }
  return { numbers: match[1]!.split(' ').map(Number), target: Number(match[2]) };
}

export function countdownTask(options: CountdownOptions = {}): CharsetTask {
  const o = withDefaults(DEFAULT_COUNTDOWN_OPTIONS, options);
  checkInt('countdownTask', 'maxCount', o.maxCount, 2, 6);
  checkInt('countdownTask', 'minCount', o.minCount, 2, o.maxCount);
  checkInt('countdownTask', 'maxValue', o.maxValue, 1, 999);
  checkInt('countdownTask', 'maxTarget', o.maxTarget, o.maxValue, 999);
  const operators = checkOperators(o.operators);
  const { minCount, maxCount, maxValue, maxTarget } = o;

  const valueDigits = String(maxValue).length;
  // "a b c>t:" and an answer of maxCount numbers, maxCount − 1 operators and at most one pair
  // of parentheses per inner node below the root (maxCount − 2 of them).
  const promptChars = maxCount * valueDigits + (maxCount - 1) + 1 + String(maxTarget).length + 1;
  const answerChars = maxCount * valueDigits + (maxCount - 1) + 2 * Math.max(0, maxCount - 2);

  return {
    name: `countdown(${minCount}–${maxCount} numbers ≤ ${maxValue}, target ≤ ${maxTarget}, ${o.operators})`,
    maxChars: promptChars + answerChars,
    answerChars: COUNTDOWN_ANSWER_CHARS,
    sample(random: () => number): TokenTaskSample {
      const count = randomInt(random, minCount, maxCount);
      const numbers = Array.from({ length: count }, () => randomInt(random, 1, maxValue));
      let solution: { expr: Expr; target: number } | undefined;
      for (let attempt = 0; attempt < ATTEMPTS && !solution; attempt++) {
        const expr = randomExpression(random, numbers, operators);
        const target = integerValue(expr);
        if (target !== undefined && target >= 1 && target <= maxTarget) solution = { expr, target };
      }
      solution ??= fallbackExpression(numbers, operators, maxTarget);
      return {
        prompt: `${numbers.join(' ')}>${solution.target}:`,
        answer: formatExpression(solution.expr),
      };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      const { numbers, target } = parseCountdownPrompt(sample.prompt);
      return checkCountdownAnswer(numbers, target, completion).correct ? 1 : 0;
    },
  };
}

function checkOperators(operators: string): Operator[] {
  const valid =
    typeof operators === 'string' &&
    operators.length >= 1 &&
    [...operators].every((c, i) => '+-*/'.includes(c) && operators.indexOf(c) === i);
  if (!valid) {
    throw new OpInputError(
      'countdownTask',
      'operators',
      `must be a non-empty set of distinct characters from "+-*/", got ${JSON.stringify(operators)}`,
    );
  }
  return [...operators] as Operator[];
}

const leaf = (n: number): Expr => ({ kind: 'number', value: BigInt(n), index: 0 });
const node = (op: Operator, left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  index: 0,
});

/** A random tree over all of `numbers`: join two random subtrees with a random operator. */
function randomExpression(random: () => number, numbers: number[], operators: Operator[]): Expr {
  const items = numbers.map(leaf);
  while (items.length > 1) {
    const [a] = items.splice(randomInt(random, 0, items.length - 1), 1);
    const [b] = items.splice(randomInt(random, 0, items.length - 1), 1);
    items.push(node(operators[randomInt(random, 0, operators.length - 1)]!, a!, b!));
  }
  return items[0]!;
}

/** The value of `expr` if it is a whole number (and has one: no division by zero). */
function integerValue(expr: Expr): number | undefined {
  try {
    const value = evaluateExpression(expr);
    return value.den === 1n ? Number(value.num) : undefined;
  } catch (error) {
    if (error instanceof ExpressionError) return undefined;
    throw error;
  }
}

/**
 * Rarely needed (after ATTEMPTS misses): a greedy expression that stays in [1, maxTarget] with
 * the allowed operators, skipping numbers it cannot use. Starts from numbers[0] ≤ maxValue ≤
 * maxTarget, and every step keeps the running value x an integer in [1, maxTarget].
 */
function fallbackExpression(
  numbers: number[],
  operators: Operator[],
  maxTarget: number,
): { expr: Expr; target: number } {
  const allowed = new Set(operators);
  let x = numbers[0]!;
  let expr = leaf(x);
  for (const n of numbers.slice(1)) {
    if (allowed.has('+') && x + n <= maxTarget) [x, expr] = [x + n, node('+', expr, leaf(n))];
    else if (allowed.has('-') && x - n >= 1) [x, expr] = [x - n, node('-', expr, leaf(n))];
    else if (allowed.has('-') && n - x >= 1) [x, expr] = [n - x, node('-', leaf(n), expr)];
    else if (allowed.has('*') && x * n <= maxTarget) [x, expr] = [x * n, node('*', expr, leaf(n))];
    else if (allowed.has('/') && x % n === 0) [x, expr] = [x / n, node('/', expr, leaf(n))];
  }
  return { expr, target: x };
}
