/**
 * libm-trig's fma: a·b + c rounded once, against exact integer arithmetic (BigInt). Its sin and
 * cos are checked against numpy in cartpole-gymnasium.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { fma } from '../../src/envs/libm-trig';

/** A finite double as sign·m·2^e with an integer m. */
function parts(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exponent = Number((bits >> 52n) & 0x7ffn);
  let m = bits & ((1n << 52n) - 1n);
  if (exponent !== 0) m |= 1n << 52n;
  const sign = bits >> 63n ? -1n : 1n;
  return { m: sign * m, e: (exponent === 0 ? 1 : exponent) - 1075 };
}

/** a·b + c exactly, then rounded once: Number(bigint) rounds to nearest-even. */
function exactFma(a: number, b: number, c: number): number {
  const pa = parts(a);
  const pb = parts(b);
  const pc = parts(c);
  const pe = pa.e + pb.e;
  const low = Math.min(pe, pc.e);
  const sum = ((pa.m * pb.m) << BigInt(pe - low)) + (pc.m << BigInt(pc.e - low));
  // Scaling by a power of two is exact while the result stays a normal double, as here.
  return Number(sum) * 2 ** low;
}

/** A small deterministic stream in [0, 1). */
function stream(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('fma', () => {
  it('rounds a·b + c once, as the exact sum rounded to nearest-even', () => {
    const next = stream(29);
    const wrong: number[][] = [];
    for (let i = 0; i < 20_000; i++) {
      const a = (next() - 0.5) * 2 ** Math.floor(next() * 20 - 10);
      const b = (next() - 0.5) * 2 ** Math.floor(next() * 20 - 10);
      const p = a * b;
      // Plain sums, near-cancellations (where a·b's low part decides), and ties of the naive sum.
      const c = [
        (next() - 0.5) * 2 ** Math.floor(next() * 40 - 20),
        -p + (next() - 0.5) * Math.abs(p) * 2 ** -50,
        -p,
        p * 2 ** Math.floor(next() * 8),
      ][i % 4]!;
      if (fma(a, b, c) !== exactFma(a, b, c)) wrong.push([a, b, c]);
    }
    expect(wrong).toEqual([]);
  });

  it('differs from a·b + c where the two roundings of the plain expression do', () => {
    // (1 + 2⁻³⁰)² = 1 + 2⁻²⁹ + 2⁻⁶⁰: a·b rounds the 2⁻⁶⁰ away, so a·b − (1 + 2⁻²⁹) is 0,
    // where one rounding keeps it.
    const a = 1 + 2 ** -30;
    const c = -(1 + 2 ** -29);
    expect(a * a + c).toBe(0);
    expect(fma(a, a, c)).toBe(2 ** -60);
  });
});
