/**
 * Seeded streams: a stream started `skip` draws in is the stream that drew them (checkpoints rely
 * on it), at any skip, without drawing them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { randomStream, seededRandom } from '../../src/util/random';

const take = (next: () => number, n: number) => Array.from({ length: n }, () => next());

describe('a stream that skips ahead', () => {
  it('gives the numbers the full stream gives after the same draws', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.nat(3000), (seed, skip) => {
        const full = seededRandom(seed);
        take(full, skip);
        expect(take(seededRandom(seed, skip), 5)).toEqual(take(full, 5));
      }),
      { numRuns: 50 },
    );
  });

  it('counts from where it starts', () => {
    const stream = randomStream(9, 40);
    expect(stream.draws).toBe(40);
    const expected = take(seededRandom(9, 40), 3);
    expect(take(stream, 3)).toEqual(expected);
    expect(stream.draws).toBe(43);
  });

  it('skips past 2³² draws: mulberry32 repeats with period 2³²', () => {
    // The state is seed + n·step (mod 2³²), so n and n + 2³² draws leave it in the same place.
    const big = 2 ** 40 + 123;
    expect(take(seededRandom(5, big), 4)).toEqual(take(seededRandom(5, 123), 4));
    expect(take(seededRandom(5, Number.MAX_SAFE_INTEGER), 2)).toEqual(
      take(seededRandom(5, Number.MAX_SAFE_INTEGER % 2 ** 32), 2),
    );
  });

  it('refuses a draw count that is not a whole number ≥ 0', () => {
    expect(() => randomStream(1, -1)).toThrow('draws must be a whole number ≥ 0, got -1');
    expect(() => randomStream(1, 2 ** 60)).toThrow('draws must be a whole number ≥ 0');
  });
});
