import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { kvCacheAppend } from '../../../src/ops/nn/kv-cache';

describe('kvCacheAppend (CPU reference)', () => {
  it('writes each sequence’s rows at row `past` of its own block, nothing else', () => {
    // B = 2, T = 1, W = 2, capacity 3, past 1: cache rows are [b0r0, b0r1, b0r2, b1r0, b1r1, b1r2].
    const cache = new Float32Array(12).fill(-1);
    kvCacheAppend(new Float32Array([1, 2, 3, 4]), cache, {
      batch: 2,
      seq: 1,
      width: 2,
      capacity: 3,
      past: 1,
    });
    expect(Array.from(cache)).toEqual([-1, -1, 1, 2, -1, -1, -1, -1, 3, 4, -1, -1]);
  });

  it('appends a prefill of T rows, up to the last row of the capacity', () => {
    const cache = new Float64Array(2 * 4).fill(9);
    kvCacheAppend(new Float64Array([5, 6, 7, 8]), cache, {
      batch: 2,
      seq: 2,
      width: 1,
      capacity: 4,
      past: 2,
    });
    expect(Array.from(cache)).toEqual([9, 9, 5, 6, 9, 9, 7, 8]);
  });

  it('writes each sequence at its own past when pasts are given', () => {
    // B = 3, T = 1, W = 1, capacity 4: pasts 0, 3, 1 (past 3 is their largest).
    const cache = new Float32Array(12).fill(0);
    kvCacheAppend(new Float32Array([7, 8, 9]), cache, {
      batch: 3,
      seq: 1,
      width: 1,
      capacity: 4,
      past: 3,
      pasts: [0, 3, 1],
    });
    expect(Array.from(cache)).toEqual([7, 0, 0, 0, 0, 0, 0, 8, 0, 9, 0, 0]);
  });

  it('rejects pasts of the wrong count or past the shared bound, naming the index', () => {
    const shape = { batch: 2, seq: 1, width: 1, capacity: 4, past: 2 };
    const rows = new Float32Array(2);
    const cache = new Float32Array(8);
    expect(() => kvCacheAppend(rows, cache, { ...shape, pasts: [1] })).toThrow(
      /pasts must have one per sequence, B = 2, got 1/,
    );
    expect(() => kvCacheAppend(rows, cache, { ...shape, pasts: [1, 3] })).toThrow(
      /pasts\[1\] must be an integer in \[0, 2\], got 3/,
    );
    expect(Array.from(cache)).toEqual(new Array(8).fill(0));
  });

  it('rejects rows past the capacity and wrong lengths, naming the field', () => {
    const shape = { batch: 1, seq: 2, width: 3, capacity: 4, past: 3 };
    expect(() => kvCacheAppend(new Float32Array(6), new Float32Array(12), shape)).toThrow(
      /past must be an integer in \[0, 2\]/,
    );
    expect(() =>
      kvCacheAppend(new Float32Array(5), new Float32Array(12), { ...shape, past: 0 }),
    ).toThrow(/rows must have B × T × width = 6 elements, got 5/);
    expect(() =>
      kvCacheAppend(new Float32Array(6), new Float32Array(11), { ...shape, past: 0 }),
    ).toThrow(OpInputError);
    expect(() =>
      kvCacheAppend(new Float32Array(6), new Float32Array(12), { ...shape, seq: 5 }),
    ).toThrow(/seq/);
  });
});
