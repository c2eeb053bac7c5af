import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  copyDifficultyLevels,
  copyTask,
  DEFAULT_COPY_OPTIONS,
} from '../../../src/envs/token-tasks/copy';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll, mutate, mutations } from './scripted';

describe('copyTask', () => {
  it('writes "<string>:" and answers the same string (worked from scripted draws)', () => {
    // length 1 + floor(0.9 · 3) = 3; characters floor(0·5) = 'a', floor(0.5·5) = 2 'c',
    // floor(0.99·5) = 4 'e'.
    drawsAll([0.9, 0, 0.5, 0.99], (random) => {
      const sample = copyTask({ minLength: 1, maxLength: 3 }).sample(random);
      expect(sample).toEqual({ prompt: 'ace:', answer: 'ace' });
    });
  });

  it('has a name, maxChars = 2·maxLength + 1 and answer characters = the alphabet', () => {
    const task = copyTask({ minLength: 2, maxLength: 5, alphabet: '0123456789' });
    expect(task.name).toBe('copy(2–5)');
    expect(task.maxChars).toBe(11); // "abcde:" + "abcde"
    expect(task.answerChars).toBe('0123456789');
    expect(copyTask().name).toBe(
      `copy(${DEFAULT_COPY_OPTIONS.minLength}–${DEFAULT_COPY_OPTIONS.maxLength})`,
    );
  });

  it('verifies exactly the reference answer', () => {
    const task = copyTask();
    const sample = { prompt: 'abc:', answer: 'abc' };
    expect(task.verify(sample, 'abc')).toBe(1);
    for (const wrong of ['', 'ab', 'abcc', 'cba', ' abc', 'abc:', 'ABC']) {
      expect(task.verify(sample, wrong)).toBe(0);
    }
  });

  it('property: the reference verifies, every mutation of it does not', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.nat(copyDifficultyLevels.length - 1),
        mutations('abcxyz'),
        (seed, level, m) => {
          const task = copyTask(copyDifficultyLevels[level]);
          const sample = task.sample(seededRandom(seed));
          expect(sample.prompt).toBe(`${sample.answer}:`);
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
      return Array.from({ length: 20 }, () => copyTask().sample(random));
    };
    expect(draw(3)).toEqual(draw(3));
    expect(draw(3)).not.toEqual(draw(4));
  });

  it.each([
    [{ maxLength: 33 }, /copyTask: maxLength must be an integer in \[1, 32\], got 33/],
    [{ minLength: 0 }, /copyTask: minLength must be an integer in \[1, 6\], got 0/],
    [{ minLength: 4, maxLength: 3 }, /minLength must be an integer in \[1, 3\], got 4/],
    [{ maxLength: 2.5 }, /maxLength must be an integer/],
    [{ alphabet: 'ab:' }, /copyTask: alphabet index 2: ":" is reserved/],
  ])('refuses %j', (options, message) => {
    expect(() => copyTask(options)).toThrow(OpInputError);
    expect(() => copyTask(options)).toThrow(message);
  });
});
