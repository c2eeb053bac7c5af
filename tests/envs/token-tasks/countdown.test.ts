import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkCountdownAnswer,
  COUNTDOWN_ANSWER_CHARS,
  countdownDifficultyLevels,
  countdownTask,
  DEFAULT_COUNTDOWN_OPTIONS,
  parseCountdownPrompt,
  type CountdownOptions,
} from '../../../src/envs/token-tasks/countdown';
import { expressionNumbers, parseExpression } from '../../../src/envs/token-tasks/expression';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll } from './scripted';

describe('countdownTask', () => {
  it('builds "3 5 7>26:" → "3*7+5" from a random expression (worked from scripted draws)', () => {
    const draws = [
      0.5, // count: 3 + floor(0.5 · 1) = 3
      0.23, // 1 + floor(0.23 · 9) = 3
      0.45, // 1 + floor(0.45 · 9) = 5
      0.67, // 1 + floor(0.67 · 9) = 7
      0, // take item floor(0 · 3) = 0 of [3, 5, 7] → 3, leaving [5, 7]
      0.9, // take item floor(0.9 · 2) = 1 of [5, 7] → 7, leaving [5]
      0.5, // operator floor(0.5 · 4) = 2 of "+-*/" → 3*7, items [5, 3*7]
      0.9, // take item 1 → 3*7, leaving [5]
      0, // take item 0 → 5
      0, // operator 0 → (3*7)+5 = 26, an integer in [1, 50]: done
    ];
    drawsAll(draws, (random) => {
      expect(countdownTask().sample(random)).toEqual({ prompt: '3 5 7>26:', answer: '3*7+5' });
    });
  });

  it('retries when the value is not a whole number in range', () => {
    const draws = [
      0.1, // count 2 (minCount 2, maxCount 2)
      0.23, // 3
      0.45, // 5
      // attempt 1: 3, 5, operator floor(0.8 · 4) = 3 '/' → 3/5, not whole: retry
      0,
      0,
      0.8,
      // attempt 2: 5 (item 1 of [3, 5]), 3, operator 2 '*' → 5*3 = 15 ≤ 20: done
      0.9,
      0,
      0.5,
    ];
    drawsAll(draws, (random) => {
      const task = countdownTask({ minCount: 2, maxCount: 2, maxTarget: 20 });
      expect(task.sample(random)).toEqual({ prompt: '3 5>15:', answer: '5*3' });
    });
  });

  it('verifies any expression that reaches the target with the given numbers', () => {
    const task = countdownTask();
    const sample = { prompt: '3 5 7>26:', answer: '3*7+5' };
    for (const right of ['3*7+5', '5+3*7', '7*3+5', '(7*3)+5', ' 5 + 7 * 3 ', '(3)*((7))+5']) {
      expect(task.verify(sample, right)).toBe(1);
    }
    const sample2 = { prompt: '2 3 4 10>14:', answer: '' };
    expect(task.verify(sample2, '10+4')).toBe(1); // a subset of the numbers is fine
    expect(task.verify(sample2, '(2+3)*4-10+4')).toBe(0); // 4 twice
    expect(task.verify(sample2, '2*3+4*2')).toBe(0); // 2 twice
    expect(task.verify(sample2, '10*3/2-4+3')).toBe(0); // 3 twice
  });

  it.each([
    ['3*7+5', 'correct'],
    ['3*5+7', 'wrong-value'], // 22
    ['(3+5)*7', 'wrong-value'], // 56
    ['3*7+5+5', 'number-not-available'], // 5 given once
    ['3*7+5-1+1', 'number-not-available'], // 1 not given
    ['21+5', 'number-not-available'],
    ['3*7+5/(7-7)', 'number-not-available'], // counted before evaluating
    ['', 'unexpected-end'],
    ['3*7+', 'unexpected-end'],
    ['3×7+5', 'unexpected-character'],
    ['3*7+5=26', 'unexpected-character'],
    ['3*07+5', 'leading-zero'],
    ['-3+29', 'unexpected-token'],
  ])('%j → %s', (text, reason) => {
    expect(checkCountdownAnswer([3, 5, 7], 26, text)).toEqual({
      correct: reason === 'correct',
      reason,
    });
  });

  it('scores division by zero, bad syntax and fractions 0 without throwing', () => {
    // 5/(3−3) needs two 3s; 7/2·4 = 14 exactly; 7/2 = 3.5 is no whole target.
    expect(checkCountdownAnswer([3, 3, 5], 5, '5/(3-3)')).toEqual({
      correct: false,
      reason: 'division-by-zero',
    });
    expect(checkCountdownAnswer([7, 2, 4], 14, '7/2*4').correct).toBe(true);
    expect(checkCountdownAnswer([7, 2], 3, '7/2').reason).toBe('wrong-value');
    const task = countdownTask();
    expect(task.verify({ prompt: '3 3 5>5:', answer: '' }, '5/(3-3)')).toBe(0);
    expect(task.verify({ prompt: '3 3 5>5:', answer: '' }, ')))(((')).toBe(0);
    expect(task.verify({ prompt: '3 3 5>5:', answer: '' }, '5'.repeat(10_000))).toBe(0);
  });

  it('reads prompts and refuses malformed ones', () => {
    expect(parseCountdownPrompt('3 5 7>26:')).toEqual({ numbers: [3, 5, 7], target: 26 });
    for (const bad of ['3 5 7>26', '3,5>8:', '>8:', '3  5>8:', '']) {
      expect(() => parseCountdownPrompt(bad)).toThrow(OpInputError);
    }
    expect(() => countdownTask().verify({ prompt: 'abc=', answer: 'cba' }, 'cba')).toThrow(
      /countdownTask: sample.prompt must look like "3 5 7>26:"/,
    );
  });

  it('sizes maxChars for the longest prompt and answer', () => {
    // Default: 3 one-digit numbers, target ≤ 50: "9 9 9>50:" is 3 + 2 + 1 + 2 + 1 = 9
    // characters; an answer has 3 digits, 2 operators, ≤ 1 pair of parentheses: 7.
    const task = countdownTask();
    expect(task.maxChars).toBe(16);
    expect(task.answerChars).toBe(COUNTDOWN_ANSWER_CHARS);
    expect(task.name).toBe('countdown(3–3 numbers ≤ 9, target ≤ 50, +-*/)');
    // 6 numbers ≤ 999, target ≤ 999: prompt 18 + 5 + 1 + 3 + 1 = 28, answer 18 + 5 + 8 = 31.
    expect(
      countdownTask({ minCount: 6, maxCount: 6, maxValue: 999, maxTarget: 999 }).maxChars,
    ).toBe(59);
  });

  const cases: fc.Arbitrary<CountdownOptions> = fc.oneof(
    fc.constantFrom(...countdownDifficultyLevels),
    fc
      .record({
        minCount: fc.integer({ min: 2, max: 6 }),
        extra: fc.integer({ min: 0, max: 4 }),
        maxValue: fc.integer({ min: 1, max: 120 }),
        extraTarget: fc.integer({ min: 0, max: 200 }),
        operators: fc.constantFrom('+', '-', '*', '/', '+-', '*/', '+-*', '+-*/', '/*-+'),
      })
      .map(({ minCount, extra, maxValue, extraTarget, operators }) => ({
        minCount,
        maxCount: Math.min(6, minCount + extra),
        maxValue,
        maxTarget: maxValue + extraTarget,
        operators,
      })),
  );

  it('property: every instance is solvable, within its options, and its reference verifies', () => {
    fc.assert(
      fc.property(cases, fc.integer(), (options, seed) => {
        const task = countdownTask(options);
        const random = seededRandom(seed);
        for (let i = 0; i < 5; i++) {
          const sample = task.sample(random);
          const { numbers, target } = parseCountdownPrompt(sample.prompt);
          const o = { ...DEFAULT_COUNTDOWN_OPTIONS, ...options };
          expect(numbers.length).toBeGreaterThanOrEqual(o.minCount);
          expect(numbers.length).toBeLessThanOrEqual(o.maxCount);
          for (const n of numbers) expect(n >= 1 && n <= o.maxValue).toBe(true);
          expect(target >= 1 && target <= o.maxTarget).toBe(true);
          expect(sample.prompt.length + sample.answer.length).toBeLessThanOrEqual(task.maxChars);
          for (const c of sample.answer) expect(COUNTDOWN_ANSWER_CHARS).toContain(c);
          expect(task.verify(sample, sample.answer)).toBe(1);
        }
      }),
      { numRuns: 250 },
    );
  });

  it('property: a changed target, or a number used more often than given, fails', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...countdownDifficultyLevels),
        fc.integer(),
        fc.integer({ min: 1, max: 50 }),
        fc.nat(),
        (options, seed, shift, pick) => {
          const task = countdownTask(options);
          const sample = task.sample(seededRandom(seed));
          const { numbers, target } = parseCountdownPrompt(sample.prompt);
          const head = sample.prompt.slice(0, sample.prompt.indexOf('>'));
          // The same answer against another target.
          for (const other of [target + shift, target - shift].filter((t) => t >= 0)) {
            expect(task.verify({ ...sample, prompt: `${head}>${other}:` }, sample.answer)).toBe(0);
          }
          // "+n-n" keeps the value but uses n twice more: fine only if n was given that often.
          const used = expressionNumbers(parseExpression(sample.answer)).map(Number);
          const n = used[pick % used.length]!;
          const given = numbers.filter((m) => m === n).length;
          const uses = used.filter((m) => m === n).length + 2;
          const spoiled = `${sample.answer}+${n}-${n}`;
          expect(task.verify(sample, spoiled)).toBe(uses <= given ? 1 : 0);
          // "(answer)*1" keeps the value: fine only if a 1 is left over.
          const ones = numbers.filter((m) => m === 1).length - used.filter((m) => m === 1).length;
          expect(task.verify(sample, `(${sample.answer})*1`)).toBe(ones > 0 ? 1 : 0);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('stays solvable when random expressions rarely land in range (the greedy fallback)', () => {
    // Sums of six numbers in 1…9 almost never stay ≤ 9, and "/" alone rarely gives whole
    // numbers: the sampler falls back to a greedy expression over some of the numbers.
    for (const operators of ['+', '/', '-', '*']) {
      const task = countdownTask({
        minCount: 6,
        maxCount: 6,
        maxValue: 9,
        maxTarget: 9,
        operators,
      });
      const random = seededRandom(99);
      for (let i = 0; i < 200; i++) {
        const sample = task.sample(random);
        expect(task.verify(sample, sample.answer)).toBe(1);
        expect(parseCountdownPrompt(sample.prompt).target).toBeLessThanOrEqual(9);
      }
    }
  });

  it('fuzz: the verifier returns 0 or 1 for any completion and never throws', () => {
    const unit = fc.constantFrom(...'0123456789+-*/() ', ...'3579+*()', 'x', '.', '<', '\n');
    const task = countdownTask();
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit, maxLength: 40 }), fc.string({ maxLength: 400 })),
        (text) => {
          const score = task.verify({ prompt: '3 5 7 9>26:', answer: '' }, text);
          expect(score === 0 || score === 1).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('is deterministic per seed', () => {
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      const task = countdownTask(countdownDifficultyLevels[3]);
      return Array.from({ length: 20 }, () => task.sample(random));
    };
    expect(draw(21)).toEqual(draw(21));
    expect(draw(21)).not.toEqual(draw(22));
  });

  it.each([
    [{ maxCount: 7 }, /countdownTask: maxCount must be an integer in \[2, 6\], got 7/],
    [{ minCount: 1 }, /countdownTask: minCount must be an integer in \[2, 3\], got 1/],
    [{ maxValue: 0 }, /countdownTask: maxValue must be an integer in \[1, 999\], got 0/],
    [{ maxValue: 60 }, /countdownTask: maxTarget must be an integer in \[60, 999\], got 50/],
    [{ operators: '' }, /countdownTask: operators must be a non-empty set/],
    [{ operators: '++' }, /operators must be a non-empty set of distinct characters/],
    [{ operators: '+x' }, /operators must be .* from "\+-\*\/", got "\+x"/],
  ])('refuses %j', (options, message) => {
    expect(() => countdownTask(options)).toThrow(OpInputError);
    expect(() => countdownTask(options)).toThrow(message);
  });
});
