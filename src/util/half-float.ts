/**
 * The 16-bit float formats of checkpoints, converted bit by bit (no Float16Array: Node 20 and
 * older browsers lack it).
 *
 * - bf16 is the top half of an f32: to f32 exactly by shifting the 16 bits up.
 * - f16 (IEEE binary16: 1 sign, 5 exponent, 10 fraction bits) to f32 is exact, subnormals, ±inf
 *   and NaN included.
 * - f32 to f16 rounds to nearest, ties to even, as IEEE 754 and the GPU's pack2x16float do; values
 *   past f16's largest (65504, or from 65520 after rounding) become ±inf and are counted, so a
 *   loader can say how many weights did not fit.
 */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The f32 whose top 16 bits are `bits` (exact). */
export function bf16ToF32(bits: number): number {
  u32[0] = (bits & 0xffff) << 16;
  return f32[0]!;
}

/** The f32 bits of the f16 `bits` (exact). */
export function f16BitsToF32Bits(bits: number): number {
  const sign = (bits & 0x8000) << 16;
  const exponent = (bits >>> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return (sign | 0x7f800000 | (fraction << 13)) >>> 0; // inf, NaN
  if (exponent !== 0) return (sign | ((exponent + 112) << 23) | (fraction << 13)) >>> 0;
  if (fraction === 0) return sign >>> 0; // ±0
  // Subnormal: fraction · 2^-24. Normalize: shift the leading 1 up to bit 10.
  let e = 113; // the f32 biased exponent of 2^-14, lowered once per shift
  let m = fraction;
  while ((m & 0x400) === 0) {
    m <<= 1;
    e--;
  }
  return (sign | (e << 23) | ((m & 0x3ff) << 13)) >>> 0;
}

/** The f32 value of the f16 `bits` (exact). */
export function f16ToF32(bits: number): number {
  u32[0] = f16BitsToF32Bits(bits);
  return f32[0]!;
}

/**
 * The f16 bits nearest the f32 with bits `x` (ties to even). A finite input that rounds past
 * f16's range gives ±inf; callers that count overflow compare against isF16Overflow.
 */
export function f32BitsToF16Bits(x: number): number {
  const sign = (x >>> 16) & 0x8000;
  const exponent = (x >>> 23) & 0xff;
  const fraction = x & 0x7fffff;
  if (exponent === 0xff) {
    // inf stays inf; NaN stays NaN (its top fraction bits kept, the quiet bit set).
    return fraction === 0 ? sign | 0x7c00 : sign | 0x7e00 | (fraction >>> 13);
  }
  const unbiased = exponent - 127;
  if (unbiased > 15) return sign | 0x7c00;
  if (unbiased >= -14) {
    // Normal: keep 10 fraction bits, round on the 13 dropped. A carry out of the fraction moves
    // into the exponent, which is right (and gives inf at the top).
    const kept = fraction >>> 13;
    const dropped = fraction & 0x1fff;
    let half = sign | ((unbiased + 15) << 10) | kept;
    if (dropped > 0x1000 || (dropped === 0x1000 && (kept & 1) === 1)) half++;
    return half;
  }
  if (unbiased < -25) return sign; // below half the smallest subnormal (f32 subnormals too)
  // Subnormal result: the value in units of 2^-24 is (1.fraction) · 2^(unbiased + 24).
  const significand = fraction | 0x800000; // 24 bits: value = significand · 2^(unbiased − 23)
  const shift = -unbiased - 1; // 14..24
  const kept = significand >>> shift;
  const dropped = significand & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  let half = sign | kept;
  if (dropped > halfway || (dropped === halfway && (kept & 1) === 1)) half++;
  return half;
}

/** The f16 bits nearest the number `value` (rounded to f32 first, as a Float32Array holds it). */
export function f32ToF16(value: number): number {
  f32[0] = value;
  return f32BitsToF16Bits(u32[0]!);
}

/** Each value as f16 storage holds it (rounded to the nearest f16, back as f32): the weights a
 *  float16 checkpoint, or the GPU's f16 storage, computes with. */
export function roundToF16(values: Float32Array): Float32Array {
  return values.map((v) => f16ToF32(f32ToF16(v)));
}

/** A finite f32 (bits `x`) became ±inf in f16 (bits `half`). */
export function isF16Overflow(x: number, half: number): boolean {
  return (x & 0x7f800000) !== 0x7f800000 && (half & 0x7fff) === 0x7c00;
}

let f16ToF32Table: Uint32Array | undefined;
let bf16ToF16Table: Uint16Array | undefined;

/**
 * f32 bits of every f16, by its bits (256 kB, built on first use): decoding a checkpoint's f16
 * tensors is then one lookup per value, several times faster than the branches above.
 */
export function f16ToF32BitsTable(): Uint32Array {
  if (!f16ToF32Table) {
    f16ToF32Table = new Uint32Array(0x10000);
    for (let h = 0; h < 0x10000; h++) f16ToF32Table[h] = f16BitsToF32Bits(h);
  }
  return f16ToF32Table;
}

/**
 * f16 bits of every bf16, by its bits (128 kB, built on first use): bf16's 8 fraction bits fit
 * f16's 10, so only the range rounds (to subnormals or zero, or overflows to ±inf), exactly as
 * f32BitsToF16Bits rounds the bf16's f32 value.
 */
export function bf16ToF16BitsTable(): Uint16Array {
  if (!bf16ToF16Table) {
    bf16ToF16Table = new Uint16Array(0x10000);
    for (let b = 0; b < 0x10000; b++) bf16ToF16Table[b] = f32BitsToF16Bits((b << 16) >>> 0);
  }
  return bf16ToF16Table;
}
