import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortChars, sortDifficultyLevels, sortTask } from '../../../src/envs/token-tasks/sort';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll, mutate, mutations } from './scripted';

describe('sortTask', () => {
  it('writes "<string>:" and answers its characters in order (worked from scripted draws)', () => {
    // length 2 + floor(0.99 · 3) = 4; characters over 'abcde': floor(0.5·5) = 2 'c',
    // floor(0·5) 'a', floor(0.3·5) = 1 'b', floor(0.45·5) = 2 'c' → "cabc" → "abcc".
    drawsAll([0.99, 0.5, 0, 0.3, 0.45], (random) => {
      const sample = sortTask({ minLength: 2, maxLength: 4 }).sample(random);
      expect(sample).toEqual({ prompt: 'cabc:', answer: 'abcc' });
    });
  });

  it('sorts digits too, and digits before letters (code order)', () => {
    // length 3 + floor(0 · 1) = 3 over '0123456789': floor(0.31·10) = 3, floor(0.1·10) = 1,
    // floor(0.25·10) = 2 → "312" → "123".
    drawsAll([0, 0.31, 0.1, 0.25], (random) => {
      const sample = sortTask({ minLength: 3, maxLength: 3, alphabet: '0123456789' }).sample(
        random,
      );
      expect(sample).toEqual({ prompt: '312:', answer: '123' });
    });
    expect(sortChars('b2a1')).toBe('12ab');
    expect(sortChars('')).toBe('');
  });

  it('has a name, maxChars = 2·maxLength + 1 and answer characters = the alphabet', () => {
    const task = sortTask({ maxLength: 10, alphabet: '01234' });
    expect(task.name).toBe('sort(3–10, 01234)');
    expect(task.maxChars).toBe(21);
    expect(task.answerChars).toBe('01234');
  });

  it('verifies exactly the reference answer', () => {
    const task = sortTask();
    const sample = { prompt: 'cab:', answer: 'abc' };
    expect(task.verify(sample, 'abc')).toBe(1);
    for (const wrong of ['', 'cab', 'ab', 'abcc', 'acb', 'abc ']) {
      expect(task.verify(sample, wrong)).toBe(0);
    }
  });

  it('property: the reference verifies, every mutation of it does not', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.nat(sortDifficultyLevels.length - 1),
        mutations('abz019'),
        (seed, level, m) => {
          const task = sortTask(sortDifficultyLevels[level]);
          const sample = task.sample(seededRandom(seed));
          const text = sample.prompt.slice(0, -1);
          expect(sample.prompt.endsWith(':')).toBe(true);
          // An independent oracle: the answer is non-decreasing and a permutation of the text.
          for (let i = 1; i < sample.answer.length; i++) {
            expect(sample.answer[i - 1]! <= sample.answer[i]!).toBe(true);
          }
          expect([...sample.answer].sort()).toEqual([...text].sort());
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
      return Array.from({ length: 20 }, () => sortTask().sample(random));
    };
    expect(draw(5)).toEqual(draw(5));
    expect(draw(5)).not.toEqual(draw(6));
  });

  it.each([
    [{ maxLength: 40 }, /sortTask: maxLength must be an integer in \[1, 32\], got 40/],
    [{ minLength: 9 }, /sortTask: minLength must be an integer in \[1, 6\], got 9/],
    [{ alphabet: 'a:' }, /sortTask: alphabet index 1: ":" is reserved/],
    [{ alphabet: 'aa' }, /sortTask: alphabet index 1: duplicate character "a"/],
  ])('refuses %j', (options, message) => {
    expect(() => sortTask(options)).toThrow(OpInputError);
    expect(() => sortTask(options)).toThrow(message);
  });
});
