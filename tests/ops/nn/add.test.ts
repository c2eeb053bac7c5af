import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { add, addInto } from '../../../src/ops/nn/add';

describe('add / addInto (CPU reference)', () => {
  it('adds elementwise into a new array of the same precision', () => {
    // [1, 2, 3] + [0.5, −2, 10] = [1.5, 0, 13].
    const a = new Float32Array([1, 2, 3]);
    const out = add(a, new Float32Array([0.5, -2, 10]));
    expect(out).toBeInstanceOf(Float32Array);
    expect(Array.from(out)).toEqual([1.5, 0, 13]);
    expect(Array.from(a)).toEqual([1, 2, 3]);
    expect(add(new Float64Array([0.1]), new Float64Array([0.2]))[0]).toBe(0.1 + 0.2);
  });

  it('addInto accumulates in place, also into itself', () => {
    // acc = [1, −1] += [2, 2] → [3, 1]; then acc += acc → [6, 2].
    const acc = new Float64Array([1, -1]);
    addInto(acc, new Float64Array([2, 2]));
    expect(Array.from(acc)).toEqual([3, 1]);
    addInto(acc, acc);
    expect(Array.from(acc)).toEqual([6, 2]);
  });

  it('rounds like float32 addition for Float32Array', () => {
    // 1 + 2^-24 is not representable in f32 (rounds to even: 1); 1 + 2^-23 is.
    const out = add(new Float32Array([1, 1]), new Float32Array([2 ** -24, 2 ** -23]));
    expect(Array.from(out)).toEqual([1, 1 + 2 ** -23]);
  });

  it.each([
    [
      'empty a',
      () => add(new Float32Array(0), new Float32Array(0)),
      /add: a must have at least 1 element/,
    ],
    [
      'b length',
      () => add(new Float32Array(2), new Float32Array(3)),
      /add: b must have a.length = 2 elements, got 3/,
    ],
    [
      'empty acc',
      () => addInto(new Float32Array(0), new Float32Array(0)),
      /addInto: acc must have at least 1/,
    ],
    [
      'x length',
      () => addInto(new Float32Array(4), new Float32Array(1)),
      /addInto: x must have acc.length = 4 elements, got 1/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
