import { describe, expect, it } from 'vitest';
import {
  bf16ToF16BitsTable,
  bf16ToF32,
  f16ToF32BitsTable,
  f16ToF32,
  f32BitsToF16Bits,
  f32ToF16,
  isF16Overflow,
} from '../../src/util/half-float';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x: number) => ((f32[0] = x), u32[0]!);

describe('half-float conversions', () => {
  it('decodes f16 values known from the IEEE 754 binary16 table', () => {
    expect(f16ToF32(0x3c00)).toBe(1);
    expect(f16ToF32(0xc000)).toBe(-2);
    expect(f16ToF32(0x7bff)).toBe(65504);
    expect(f16ToF32(0x0400)).toBe(2 ** -14); // smallest normal
    expect(f16ToF32(0x0001)).toBe(2 ** -24); // smallest subnormal
    expect(f16ToF32(0x03ff)).toBe(1023 * 2 ** -24); // largest subnormal
    expect(f16ToF32(0x3555)).toBe(0.333251953125);
    expect(Object.is(f16ToF32(0x8000), -0)).toBe(true);
    expect(f16ToF32(0x7c00)).toBe(Infinity);
    expect(f16ToF32(0xfc00)).toBe(-Infinity);
    expect(f16ToF32(0x7e00)).toBeNaN();
  });

  it('decodes every f16 to the value its fields give (computed in f64 here)', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const sign = h & 0x8000 ? -1 : 1;
      const e = (h >> 10) & 31;
      const m = h & 1023;
      const expected =
        e === 31
          ? m
            ? NaN
            : sign * Infinity
          : e === 0
            ? sign * m * 2 ** -24
            : sign * (1 + m / 1024) * 2 ** (e - 15);
      const got = f16ToF32(h);
      const ok = Number.isNaN(expected)
        ? Number.isNaN(got)
        : Object.is(got, expected === 0 ? sign * 0 : expected);
      if (!ok) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('round-trips every non-NaN f16 through f32 unchanged', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      if ((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0) continue;
      if (f32ToF16(f16ToF32(h)) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('rounds f32 to nearest f16, ties to even, at every midpoint of positive f16s', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x7bff; h++) {
      const lo = f16ToF32(h);
      const hi = f16ToF32(h + 1);
      const mid = (lo + hi) / 2; // 12 significant bits: exact in f32
      const even = h % 2 === 0 ? h : h + 1;
      const midBits = bitsOf(mid);
      const ok =
        Math.fround(mid) === mid &&
        f32ToF16(mid) === even &&
        f32BitsToF16Bits(midBits - 1) === h && // just below the midpoint
        f32BitsToF16Bits(midBits + 1) === h + 1 && // just above
        f32ToF16(-mid) === (even | 0x8000);
      if (!ok) wrong.push(h);
    }
    expect(wrong).toEqual([]);
  });

  it('overflows to inf from 65520 (the midpoint past 65504) and counts it', () => {
    expect(f32ToF16(65519.99)).toBe(0x7bff);
    expect(f32ToF16(65520)).toBe(0x7c00);
    expect(f32ToF16(-1e6)).toBe(0xfc00);
    expect(isF16Overflow(bitsOf(65520), 0x7c00)).toBe(true);
    expect(isF16Overflow(bitsOf(Infinity), 0x7c00)).toBe(false);
    expect(isF16Overflow(bitsOf(65504), 0x7bff)).toBe(false);
  });

  it('flushes below half the smallest subnormal to signed zero; NaN stays NaN', () => {
    expect(f32ToF16(2 ** -25)).toBe(0); // a tie between 0 and 2^-24: even is 0
    expect(f32ToF16(2 ** -25 * 1.0001)).toBe(1);
    expect(f32ToF16(2 ** -26)).toBe(0);
    expect(f32ToF16(-(2 ** -30))).toBe(0x8000);
    expect(f32ToF16(1e-45)).toBe(0); // an f32 subnormal
    const nan = f32ToF16(NaN);
    expect(nan & 0x7c00).toBe(0x7c00);
    expect(nan & 0x3ff).not.toBe(0);
  });

  it('decodes bf16 as the top half of an f32', () => {
    expect(bf16ToF32(0x3f80)).toBe(1);
    expect(bf16ToF32(0xc040)).toBe(-3);
    expect(bf16ToF32(0x7f7f)).toBe(3.3895313892515355e38); // largest finite bf16
    expect(bf16ToF32(0x0001)).toBe(2 ** -133); // smallest subnormal bf16
    expect(bf16ToF32(0xff80)).toBe(-Infinity);
  });

  it('tables: every f16 to its f32, every bf16 to its nearest f16 (ties to even)', () => {
    const f16Table = f16ToF32BitsTable();
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      u32[0] = f16Table[h]!;
      const got = f32[0]!;
      if (!(Object.is(got, f16ToF32(h)) || (Number.isNaN(got) && Number.isNaN(f16ToF32(h)))))
        wrong.push(h);
    }
    const table = bf16ToF16BitsTable();
    for (let b = 0; b < 0x10000; b++) {
      const v = bf16ToF32(b);
      const h = table[b]!;
      if (Number.isNaN(v)) {
        if (!Number.isNaN(f16ToF32(h))) wrong.push(b);
        continue;
      }
      if (Math.abs(v) >= 65520) {
        if (f16ToF32(h) !== Math.sign(v) * Infinity) wrong.push(b);
        continue;
      }
      // h is finite with v's sign, and neither neighbour is nearer (a tie goes to the even one).
      const d = Math.abs(f16ToF32(h) - v);
      if (!Number.isFinite(d) || h >> 15 !== (Object.is(v, -0) || v < 0 ? 1 : 0)) wrong.push(b);
      for (const n of [h - 1, h + 1]) {
        if (n < 0 || (n & 0x7fff) >= 0x7c00 || n >> 15 !== h >> 15) continue;
        const dn = Math.abs(f16ToF32(n) - v);
        if (dn < d || (dn === d && h % 2 === 1)) wrong.push(b);
      }
    }
    expect(wrong).toEqual([]);
  });
});
