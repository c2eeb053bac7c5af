import { describe, expect, it } from 'vitest';
import { packF16, unpackF16 } from '../../../src/ops/nn/unpack-f16';

describe('f16 pairs (src/ops/nn/unpack-f16.ts)', () => {
  it('packs the lower index into the low half, as unpack2x16float reads it', () => {
    // 1.0 is 0x3C00 in f16, −2.0 is 0xC000, 0.5 is 0x3800.
    const { packed, overflowed } = packF16(Float32Array.from([1, -2, 0.5]));
    expect(Array.from(packed)).toEqual([0xc0003c00, 0x00003800]);
    expect(overflowed).toBe(0);
    expect(Array.from(unpackF16(packed, 3))).toEqual([1, -2, 0.5]);
  });

  it('rounds to the nearest f16 (ties to even) and counts what overflows', () => {
    // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: ties to even gives 1. 1 + 3·2^-11 is
    // halfway between 1 + 2^-10 and 1 + 2^-9: even is 1 + 2^-9. 65520 rounds past 65504: inf.
    const values = Float32Array.from([
      1 + 2 ** -11,
      1 + 3 * 2 ** -11,
      65504,
      65520,
      -1e6,
      2 ** -24,
    ]);
    const { packed, overflowed } = packF16(values);
    expect(Array.from(unpackF16(packed, values.length))).toEqual([
      1,
      1 + 2 ** -9,
      65504,
      Infinity,
      -Infinity,
      2 ** -24,
    ]);
    expect(overflowed).toBe(2);
  });

  it('refuses a wrong word count or count, naming the field and the size', () => {
    expect(() => unpackF16(new Uint32Array(1), 3)).toThrow(
      'unpackF16: packed must have ⌈count / 2⌉ = 2 words, got 1',
    );
    expect(() => unpackF16(new Uint32Array(1), 0)).toThrow('count must be an integer in [1,');
  });
});
