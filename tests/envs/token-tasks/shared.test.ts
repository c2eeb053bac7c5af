import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  ALPHABET_PRESETS,
  checkAlphabet,
  randomInt,
  randomString,
  withDefaults,
} from '../../../src/envs/token-tasks/shared';
import { seededRandom } from '../../../src/util/random';
import { scripted } from './scripted';

describe('checkAlphabet', () => {
  it('accepts the presets', () => {
    for (const alphabet of ALPHABET_PRESETS)
      expect(() => checkAlphabet('t', alphabet, ':=')).not.toThrow();
  });

  it.each([
    ['', /alphabet must hold 1–64 characters, got 0 characters/],
    ['a'.repeat(65), /got 65 characters/],
    ['abA', /index 2: "A" is not in the default tokenizer's alphabet/],
    ['ab\n', /index 2: "\\n" is reserved/],
    ['a<b', /index 1: "<" is reserved/],
    ['ab:', /index 2: ":" is reserved/],
    ['abca', /index 3: duplicate character "a", first at index 0/],
  ])('refuses %j', (alphabet, message) => {
    expect(() => checkAlphabet('myTask', alphabet, ':')).toThrow(OpInputError);
    expect(() => checkAlphabet('myTask', alphabet, ':')).toThrow(message);
    expect(() => checkAlphabet('myTask', alphabet, ':')).toThrow(/^myTask: alphabet/);
  });
});

describe('randomInt / randomString', () => {
  it('map uniforms to integers by floor: [0, 1) → [min, max]', () => {
    // 2 + floor(0 · 3) = 2; 2 + floor(0.999 · 3) = 4; 2 + floor(0.5 · 3) = 3.
    const random = scripted([0, 0.999, 0.5]);
    expect([randomInt(random, 2, 4), randomInt(random, 2, 4), randomInt(random, 2, 4)]).toEqual([
      2, 4, 3,
    ]);
  });

  it('draws the length first, then one value per character', () => {
    // length 1 + floor(0.7 · 3) = 3; characters floor(0.1·5)=0 'a', floor(0.99·5)=4 'e',
    // floor(0.4·5)=2 'c'.
    expect(randomString(scripted([0.7, 0.1, 0.99, 0.4]), 'abcde', 1, 3)).toBe('aec');
  });

  it('stays in range for a seeded source', () => {
    const random = seededRandom(7);
    for (let i = 0; i < 1000; i++) {
      const s = randomString(random, 'xyz', 2, 5);
      expect(s.length).toBeGreaterThanOrEqual(2);
      expect(s.length).toBeLessThanOrEqual(5);
      expect(s).toMatch(/^[xyz]+$/);
    }
  });
});

describe('withDefaults', () => {
  it('fills in fields left out or undefined, keeps the rest', () => {
    const defaults = { a: 1, b: 'x' };
    expect(withDefaults<{ a?: number; b?: string }>(defaults, { a: undefined })).toEqual(defaults);
    expect(withDefaults<{ a?: number; b?: string }>(defaults, { b: 'y' })).toEqual({
      a: 1,
      b: 'y',
    });
  });
});
