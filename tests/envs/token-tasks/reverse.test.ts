import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_REVERSE_OPTIONS,
  reverseDifficultyLevels,
  reverseTask,
} from '../../../src/envs/token-tasks/reverse';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll, mutate, mutations } from './scripted';

describe('reverseTask', () => {
  it('writes "<string>=" and answers it backwards (worked from scripted draws)', () => {
    // length 3 + floor(0.5 · 4) = 5; characters over 'abc': floor(0·3) 'a', floor(0.4·3) = 1
    // 'b', floor(0.7·3) = 2 'c', 'c', 'a' → "abcca", reversed "accba".
    drawsAll([0.5, 0, 0.4, 0.7, 0.7, 0.1], (random) => {
      const sample = reverseTask({ minLength: 3, maxLength: 6, alphabet: 'abc' }).sample(random);
      expect(sample).toEqual({ prompt: 'abcca=', answer: 'accba' });
    });
  });

  it('keeps its defaults (3–6 over a–e) and sizes', () => {
    expect(DEFAULT_REVERSE_OPTIONS).toEqual({ minLength: 3, maxLength: 6, alphabet: 'abcde' });
    const task = reverseTask();
    expect(task.name).toBe('reverse(3–6)');
    expect(task.maxChars).toBe(13); // "abcdef=" + "fedcba"
    expect(task.answerChars).toBe('abcde');
    // An option given as undefined takes its default.
    expect(reverseTask({ maxLength: undefined }).maxChars).toBe(13);
  });

  it('verifies exactly the reference answer', () => {
    const task = reverseTask();
    const sample = { prompt: 'abc=', answer: 'cba' };
    expect(task.verify(sample, 'cba')).toBe(1);
    for (const wrong of ['', 'abc', 'cb', 'cbaa', 'cba ', 'cba=']) {
      expect(task.verify(sample, wrong)).toBe(0);
    }
  });

  it('property: the reference verifies, every mutation of it does not', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.nat(reverseDifficultyLevels.length - 1),
        mutations('abez'),
        (seed, level, m) => {
          const task = reverseTask(reverseDifficultyLevels[level]);
          const sample = task.sample(seededRandom(seed));
          expect(sample.prompt).toBe(`${[...sample.answer].reverse().join('')}=`);
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
      return Array.from({ length: 20 }, () => reverseTask().sample(random));
    };
    expect(draw(11)).toEqual(draw(11));
    expect(draw(11)).not.toEqual(draw(12));
  });

  it.each([
    [{ maxLength: 0 }, /reverseTask: maxLength must be an integer in \[1, 32\], got 0/],
    [{ minLength: 7 }, /reverseTask: minLength must be an integer in \[1, 6\], got 7/],
    [{ alphabet: '' }, /reverseTask: alphabet must hold 1–64 characters/],
    [{ alphabet: 'a=b' }, /reverseTask: alphabet index 1: "=" is reserved/],
    [{ alphabet: 'aé' }, /index 1: "é" is not in the default tokenizer's alphabet/],
  ])('refuses %j', (options, message) => {
    expect(() => reverseTask(options)).toThrow(OpInputError);
    expect(() => reverseTask(options)).toThrow(message);
  });
});
