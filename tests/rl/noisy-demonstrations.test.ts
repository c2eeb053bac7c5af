/**
 * The noisy demonstrator of the shipped copy-noisy start: how often a demonstration is wholly
 * right, measured over many draws, against what each way of setting the noise promises.
 */
import { describe, expect, it } from 'vitest';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { charNoiseFor, noisyDemonstrations } from '../../src/rl/noisy-demonstrations';

/** A seeded stream (Park–Miller), so the draws and so the test are the same every run. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 16807) % 2147483647;
    return s / 2147483647;
  };
}

function copyOfLength(length: number) {
  return createTokenTask('copy', { minLength: length, maxLength: length, alphabet: 'abcde' });
}

/** Share of `draws` demonstrations whose answer is the prompt's string exactly. */
function wholeRightShare(length: number, noise: Parameters<typeof noisyDemonstrations>[1]) {
  const noisy = noisyDemonstrations(copyOfLength(length), noise);
  const random = seeded(7 + length);
  const draws = 20_000;
  let right = 0;
  for (let i = 0; i < draws; i++) {
    const { prompt, answer } = noisy.sample(random);
    expect(prompt.endsWith(':')).toBe(true);
    if (answer === prompt.slice(0, -1)) right++;
  }
  return right / draws;
}

describe('noisyDemonstrations', () => {
  it('wholeAnswerRight keeps a demonstration wholly right at the same rate for every length', () => {
    // Binomial standard error at q = 0.3 over 20,000 draws: 0.0032; 4 of them is 0.013.
    for (const length of [3, 4, 5, 6]) {
      expect(Math.abs(wholeRightShare(length, { wholeAnswerRight: 0.3 }) - 0.3)).toBeLessThan(
        0.013,
      );
    }
  });

  it('perChar noise makes long demonstrations rarer right: (1 − n·(1 − 1/|A|))^L', () => {
    for (const length of [3, 6]) {
      const expected = Math.pow(1 - 0.3 * 0.8, length);
      expect(Math.abs(wholeRightShare(length, { perChar: 0.3 }) - expected)).toBeLessThan(0.013);
    }
  });

  it('charNoiseFor solves r^L = q for the per-character rate', () => {
    // q 0.3, L 3, |A| 5: r = 0.3^(1/3) = 0.66943, n = (1 − r)·5/4 = 0.41321.
    expect(charNoiseFor({ wholeAnswerRight: 0.3 }, 3, 5)).toBeCloseTo(0.41321, 5);
    // L 6: r = 0.81819, n = 0.22726.
    expect(charNoiseFor({ wholeAnswerRight: 0.3 }, 6, 5)).toBeCloseTo(0.22726, 5);
    expect(charNoiseFor({ wholeAnswerRight: 1 }, 4, 5)).toBe(0);
    expect(charNoiseFor({ perChar: 0.25 }, 6, 5)).toBe(0.25);
  });

  it('refuses noise out of range, naming the field and the range', () => {
    const copy = copyOfLength(3);
    expect(() => noisyDemonstrations(copy, { perChar: 1.5 })).toThrow(
      /noise\.perChar.*\[0, 1\].*1\.5/,
    );
    expect(() => noisyDemonstrations(copy, { wholeAnswerRight: 0.1 })).toThrow(
      /noise\.wholeAnswerRight.*\[0\.2, 1\].*alphabet of 5.*0\.1/,
    );
    expect(() => noisyDemonstrations(copy, { wholeAnswerRight: Number.NaN })).toThrow(
      /noise\.wholeAnswerRight/,
    );
  });
});
