/**
 * sin and cos that return, bit for bit, what glibc's libm returns on x86-64 for |x| < 0.85546875,
 * the values numpy's float64 np.sin / np.cos give gymnasium's CartPole.
 *
 * Why not Math.sin/Math.cos: V8's fdlibm port and glibc differ in the last bit for about one
 * argument in a hundred in CartPole's range (|θ| < 0.21 rad), and neither is correctly rounded
 * (glibc's error reaches 0.52 ulp here), so a correctly rounded sin would not match either. The
 * pole is unstable: a one-ulp difference at step 100 grows until the float32 observations differ
 * some 100 steps later and the episode can end at a different step. Matching gymnasium over a
 * 500-step episode needs glibc's exact arithmetic.
 *
 * The method (IBM's accurate mathematical library, as glibc's dbl-64 sin/cos use it since 2.28):
 *  - |x| < 2⁻²⁶ (sin) or 2⁻²⁷ (cos): sin x = x, cos x = 1.
 *  - sin, |x| < 0.126: x + x³·P(x²) with a degree-4 minimax P in x² (coefficients S1…S5).
 *  - otherwise x = X_k + r with X_k = k/128 the nearest table point, and sin(X_k), cos(X_k) from a
 *    table as double-doubles (hi + lo); sin r and 1 − cos r by short series (SN3, SN5; CS2…CS6),
 *    combined by the angle-sum formulas.
 * glibc's x86-64 build selects its FMA variant on any CPU with FMA (every x86-64 CPU since 2013),
 * where the compiler fuses a·b + c into one rounding; the order of operations and the fused
 * steps below are that build's, read off its machine code and checked against libm on 2·10⁶
 * arguments with no difference. JavaScript has no fma, so `fma` below emulates the one rounding
 * exactly (Dekker's product, then rounding to odd: Boldo & Melquiond, "Emulation of FMA and
 * correctly rounded sums: proved algorithms using rounding to odd", IEEE TC 2008).
 *
 * Outside |x| < 0.85546875 (a CartPole state placed there by hand) these fall back to Math.sin
 * and Math.cos: glibc's larger-argument paths are not reproduced.
 */

/** Dekker's splitter 2²⁷ + 1: splits a double into two 26-bit halves. */
const SPLIT = 134217729;

/** Scratch views for reading and stepping a double's bit pattern (little-endian low word first). */
const f64 = new Float64Array(1);
const u32 = new Uint32Array(f64.buffer);
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;

/**
 * a·b + c rounded once to nearest-even, as an FMA instruction computes it. Exact for the finite
 * arguments of this module (no overflow in Dekker's split, no underflow of the low parts).
 */
export function fma(a: number, b: number, c: number): number {
  // ph + pl = a·b exactly (Dekker's product).
  const ph = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b);
  const bl = b - bh;
  const pl = ah * bh - ph + ah * bl + al * bh + al * bl;
  // th + tl = c + ph exactly (Knuth's two-sum).
  const th = c + ph;
  const cv = th - ph;
  const tl = ph - (th - cv) + (c - cv);
  // v = tl + pl rounded to odd; then one rounding to nearest of th + v is the rounding of the
  // exact a·b + c (Boldo & Melquiond's emulated FMA).
  const s = tl + pl;
  const sb = s - tl;
  const e = tl - (s - sb) + (pl - sb);
  let v = s;
  if (e !== 0) {
    f64[0] = s;
    if ((u32[LOW]! & 1) === 0) {
      // s is even and inexact: the odd neighbour on e's side of s is the odd rounding.
      const away = s > 0 === e > 0;
      stepMagnitude(away);
      v = f64[0]!;
    }
  }
  return th + v;
}

/** Moves the double in f64[0] one ulp away from zero (away) or toward it. */
function stepMagnitude(away: boolean): void {
  const hi = 1 - LOW;
  if (away) {
    if (u32[LOW] === 0xffffffff) {
      u32[LOW] = 0;
      u32[hi] = u32[hi]! + 1;
    } else u32[LOW] = u32[LOW]! + 1;
  } else if (u32[LOW] === 0) {
    u32[LOW] = 0xffffffff;
    u32[hi] = u32[hi]! - 1;
  } else u32[LOW] = u32[LOW]! - 1;
}

// Polynomial coefficients of glibc's dbl-64 sin/cos (usncs.h and s_sin.c), written as the
// shortest decimals that parse to the same doubles (hex in the comments).
/** −0x1.5555555555555p−3 */
const S1 = -0.16666666666666666;
/** 0x1.1111111110ecep−7 */
const S2 = 0.008333333333332329;
/** −0x1.a01a019db08b8p−13 */
const S3 = -0.00019841269834414642;
/** 0x1.71de27b9a7ed9p−19 */
const S4 = 2.755729806860771e-6;
/** −0x1.addffc2fcdf59p−26 */
const S5 = -2.5022014848318398e-8;
/** −0x1.5555555555515p−3 */
const SN3 = -0.16666666666666488;
/** 0x1.11110e829872fp−7 */
const SN5 = 0.008333332142857223;
/** 0x1p−1 */
const CS2 = 0.5;
/** −0x1.5555555555535p−5 */
const CS4 = -0.04166666666666644;
/** 0x1.6c16bedd9e239p−10 */
const CS6 = 0.001388888740079376;
/** 1.5·2⁴⁵: adding it rounds |x| to a multiple of 2⁻⁷ (its ulp). */
const BIG = 52776558133248;
/** Table points X_k = k/128 for k = 0…109 cover |x| < 0.86. */
const TABLE_POINTS = 110;

/**
 * sin(k/128) and cos(k/128) for k < 110 as double-doubles: [sin hi, sin lo, cos hi, cos lo] per k,
 * hi the value rounded to nearest and lo the rest rounded to nearest. Computed here in 160-bit
 * fixed point (Taylor series in BigInt, error below 2⁻¹⁵⁰) rather than copied: the values are
 * glibc's table (sincostab.c) to the last bit, which the tests check through the results.
 */
let table: Float64Array | undefined;

function sinCosTable(): Float64Array {
  if (table) return table;
  const F = 160n;
  const ONE = 1n << F;
  const scale = 2 ** -160;
  const out = new Float64Array(TABLE_POINTS * 4);
  /** hi, lo of the fixed-point value v / 2¹⁶⁰: Number(bigint) rounds to nearest-even. */
  const split = (v: bigint, at: number) => {
    const hiScaled = Number(v);
    out[at] = hiScaled * scale;
    out[at + 1] = Number(v - BigInt(hiScaled)) * scale;
  };
  for (let k = 0; k < TABLE_POINTS; k++) {
    const x = (BigInt(k) << F) / 128n;
    const x2 = (x * x) >> F;
    // sin x = Σ (−1)ⁿ x²ⁿ⁺¹/(2n+1)!, cos x = Σ (−1)ⁿ x²ⁿ/(2n)!; terms below 2⁻¹⁶⁰ vanish.
    let sin = 0n;
    let term = x;
    for (let n = 1n; term !== 0n; n += 2n) {
      sin += term;
      term = -((term * x2) >> F) / ((n + 1n) * (n + 2n));
    }
    let cos = 0n;
    term = ONE;
    for (let n = 0n; term !== 0n; n += 2n) {
      cos += term;
      term = -((term * x2) >> F) / ((n + 1n) * (n + 2n));
    }
    split(sin, 4 * k);
    split(cos, 4 * k + 2);
  }
  table = out;
  return out;
}

/** Beyond this glibc leaves the table method; so do these functions (to Math.sin/Math.cos). */
const TABLE_LIMIT = 0.85546875;

/** sin x as glibc's libm computes it (x86-64, FMA build) for |x| < 0.85546875. */
export function libmSin(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2 ** -26) return x;
  if (!(ax < TABLE_LIMIT)) return Math.sin(x);
  const xx = x * x;
  if (ax < 0.126) {
    const p = fma(xx, fma(xx, fma(xx, fma(xx, S5, S4), S3), S2), S1);
    return x + xx * (p * x);
  }
  const tab = sinCosTable();
  const nearest = BIG + ax - BIG;
  const k = (nearest * 512) | 0;
  const r = ax - nearest;
  const rr = r * r;
  const s = r + r * rr * fma(rr, SN5, SN3);
  const c = rr * fma(rr, fma(rr, CS6, CS4), CS2);
  const sn = tab[k]!;
  const ssn = tab[k + 1]!;
  const cs = tab[k + 2]!;
  const ccs = tab[k + 3]!;
  // sin(X + r) = sin X + (sin X·(cos r − 1) + cos X·sin r), the small parts first.
  const cor = fma(s, cs, fma(-c, sn, fma(s, ccs, ssn)));
  const result = sn + cor;
  return x < 0 ? -result : result;
}

/** cos x as glibc's libm computes it (x86-64, FMA build) for |x| < 0.85546875. */
export function libmCos(x: number): number {
  const ax = Math.abs(x);
  if (ax < 2 ** -27) return 1;
  if (!(ax < TABLE_LIMIT)) return Math.cos(x);
  const tab = sinCosTable();
  const nearest = BIG + ax - BIG;
  const k = (nearest * 512) | 0;
  const r = ax - nearest;
  const rr = r * r;
  const s = fma(r * rr, fma(rr, SN5, SN3), r);
  const c = rr * fma(rr, fma(rr, CS6, CS4), CS2);
  const sn = tab[k]!;
  const ssn = tab[k + 1]!;
  const cs = tab[k + 2]!;
  const ccs = tab[k + 3]!;
  // cos(X + r) = cos X − (cos X·(1 − cos r) + sin X·sin r), the small parts first.
  const cor = fma(-s, sn, fma(-c, cs, fma(-s, ssn, ccs)));
  return cs + cor;
}
