import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addDecimal,
  additionDifficultyLevels,
  additionTask,
  type AdditionOptions,
} from '../../../src/envs/token-tasks/addition';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll, mutate, mutations } from './scripted';

const digits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

describe('addDecimal', () => {
  it.each([
    ['12', '345', '357'],
    ['999', '1', '1000'], // the carry runs through every digit
    ['0', '0', '0'],
    ['5', '5', '10'],
    ['007', '3', '10'], // leading zeros in the input do not survive
    ['99999999999999999999', '1', '100000000000000000000'], // past 2^53, still exact
  ])('%s + %s = %s', (a, b, sum) => {
    expect(addDecimal(a, b)).toBe(sum);
    expect(addDecimal(b, a)).toBe(sum);
  });

  it('agrees with BigInt addition', () => {
    fc.assert(
      fc.property(digits(1, 25), digits(1, 25), (a, b) => {
        expect(addDecimal(a, b)).toBe((BigInt(a) + BigInt(b)).toString());
      }),
      { numRuns: 500 },
    );
  });

  it('refuses anything but digits', () => {
    expect(() => addDecimal('', '1')).toThrow(/addDecimal: a must be one or more digits/);
    expect(() => addDecimal('1', '-2')).toThrow(OpInputError);
  });
});

describe('additionTask', () => {
  it('writes "a+b=" and answers the sum (worked from scripted draws)', () => {
    // a: 1 + floor(0.5 · 3) = 2 digits: first 1 + floor(0 · 9) = 1, then floor(0.25 · 10) = 2
    // → "12". b: 1 + floor(0.9 · 3) = 3 digits: 1 + floor(0.3 · 9) = 3, floor(0.4·10) = 4,
    // floor(0.5·10) = 5 → "345". 12 + 345 = 357.
    const draws = [0.5, 0, 0.25, 0.9, 0.3, 0.4, 0.5];
    drawsAll(draws, (random) => {
      expect(additionTask({ minDigits: 1, maxDigits: 3 }).sample(random)).toEqual({
        prompt: '12+345=',
        answer: '357',
      });
    });
    drawsAll(draws, (random) => {
      const task = additionTask({ minDigits: 1, maxDigits: 3, reverseAnswer: true });
      expect(task.sample(random)).toEqual({ prompt: '12+345=', answer: '753' });
    });
  });

  it('lets a one-digit operand be 0', () => {
    // digits 1 (one draw), digit floor(0 · 10) = 0; digits 1, digit floor(0.95 · 10) = 9.
    drawsAll([0.3, 0, 0.7, 0.95], (random) => {
      expect(additionTask({ minDigits: 1, maxDigits: 1 }).sample(random)).toEqual({
        prompt: '0+9=',
        answer: '9',
      });
    });
  });

  it('has a name, maxChars = 3·maxDigits + 3 and digit answers', () => {
    const task = additionTask({ minDigits: 2, maxDigits: 4 });
    expect(task.name).toBe('addition(2–4 digits)');
    expect(task.maxChars).toBe(15); // "9999+9999=" + "19998"
    expect(task.answerChars).toBe('0123456789');
    expect(additionTask({ reverseAnswer: true }).name).toBe('addition(1–2 digits, reversed)');
  });

  it('verifies exactly the canonical sum', () => {
    const task = additionTask();
    const sample = { prompt: '12+345=', answer: '357' };
    expect(task.verify(sample, '357')).toBe(1);
    for (const wrong of ['', '0357', ' 357', '357 ', '358', '753', '357=', '3 5 7']) {
      expect(task.verify(sample, wrong)).toBe(0);
    }
  });

  it('property: samples are well formed, the reference verifies, mutations do not', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.nat(additionDifficultyLevels.length - 1),
        fc.boolean(),
        mutations('0159'),
        (seed, level, reverseAnswer, m) => {
          const options: AdditionOptions = { ...additionDifficultyLevels[level], reverseAnswer };
          const task = additionTask(options);
          const sample = task.sample(seededRandom(seed));
          const match = /^(0|[1-9][0-9]*)\+(0|[1-9][0-9]*)=$/.exec(sample.prompt);
          expect(match).not.toBeNull();
          const [a, b] = [match![1]!, match![2]!];
          for (const operand of [a, b]) {
            expect(operand.length).toBeGreaterThanOrEqual(options.minDigits!);
            expect(operand.length).toBeLessThanOrEqual(options.maxDigits!);
          }
          const sum = (BigInt(a) + BigInt(b)).toString();
          expect(sample.answer).toBe(reverseAnswer ? [...sum].reverse().join('') : sum);
          expect(sample.prompt.length + sample.answer.length).toBeLessThanOrEqual(task.maxChars);
          expect(task.verify(sample, sample.answer)).toBe(1);
          const spoiled = mutate(sample.answer, m);
          if (spoiled !== sample.answer) expect(task.verify(sample, spoiled)).toBe(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is deterministic per seed', () => {
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 20 }, () => additionTask({ maxDigits: 4 }).sample(random));
    };
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(2));
  });

  it.each([
    [{ maxDigits: 21 }, /additionTask: maxDigits must be an integer in \[1, 20\], got 21/],
    [{ minDigits: 3 }, /additionTask: minDigits must be an integer in \[1, 2\], got 3/],
    [{ minDigits: 0 }, /minDigits must be an integer in \[1, 2\], got 0/],
    [
      { reverseAnswer: 'yes' as unknown as boolean },
      /additionTask: reverseAnswer must be true or false, got yes/,
    ],
  ])('refuses %j', (options, message) => {
    expect(() => additionTask(options)).toThrow(OpInputError);
    expect(() => additionTask(options)).toThrow(message);
  });
});
