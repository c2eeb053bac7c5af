import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { copy } from '../../src/ops/copy';

/** The bytes of a Float32Array, for bit-for-bit comparisons (NaN, −0). */
function bits(x: Float32Array): number[] {
  return Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));
}

describe('copy (CPU reference)', () => {
  it('returns the same values, special values included, in a new array', () => {
    // A copy keeps every bit: −0 stays −0, NaN stays NaN, ±Inf stay infinite.
    const x = new Float32Array([1, -2.5, -0, NaN, Infinity, -Infinity, 3.4e38, 1e-45]);
    const y = copy(x);
    expect(y).not.toBe(x);
    expect(y.buffer).not.toBe(x.buffer);
    expect(bits(y)).toEqual(bits(x));
    expect(Object.is(y[2], -0)).toBe(true);
    expect(Number.isNaN(y[3])).toBe(true);
  });

  it('copies a view of a larger buffer without the elements around it', () => {
    const backing = new Float32Array([9, 1, 2, 3, 9]);
    const y = copy(backing.subarray(1, 4));
    expect(Array.from(y)).toEqual([1, 2, 3]);
  });

  it('property: output equals input bit for bit, and writing to it leaves the input alone', () => {
    fc.assert(
      fc.property(fc.float32Array({ minLength: 1, maxLength: 300 }), (x) => {
        const before = bits(x);
        const y = copy(x);
        expect(bits(y)).toEqual(before);
        y.fill(7);
        expect(bits(x)).toEqual(before);
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    [
      'empty input',
      () => copy(new Float32Array(0)),
      /x must have between 1 and 2147483647 elements, got 0/,
    ],
    [
      'non-Float32Array input',
      () => copy(new Float64Array(3) as unknown as Float32Array),
      /x must be a Float32Array/,
    ],
    [
      'workgroupSize',
      () => copy(new Float32Array(4), { workgroupSize: 100 as 64 }),
      /workgroupSize must be one of 64, 128, 256, got 100/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
