/**
 * 16-bit weights as the GPU stores them and the f32 the kernels compute with: two IEEE halves in
 * each u32, the element with the lower index in the low 16 bits — what WGSL's unpack2x16float
 * reads, so no `shader-f16` feature is needed to keep a model in half the memory. The CPU path
 * keeps every group in f32; this is the spec of kernels/nn/unpack_f16.wgsl and of the packing
 * that fills its buffers.
 *
 *   values, out: (count) f32   packed: (⌈count / 2⌉) u32
 */
import { f32ToF16, isF16Overflow, f16ToF32 } from '../../util/half-float';
import { checkInt } from '../validate';
import { OpInputError } from '../errors';

/** Largest count: flat indices below 2^31 as the other nn ops. */
const MAX_COUNT = 2 ** 31 - 1;

/** u32 words that hold `count` halves. */
export function packedWords(count: number): number {
  return Math.ceil(count / 2);
}

/** The checks unpackF16() and its GPU wrapper share. */
export function checkUnpackF16Input(packed: Uint32Array, count: number): void {
  const op = 'unpackF16';
  checkInt(op, 'count', count, 1, MAX_COUNT);
  if (!(packed instanceof Uint32Array)) {
    throw new OpInputError(op, 'packed', 'must be a Uint32Array of f16 pairs');
  }
  if (packed.length !== packedWords(count)) {
    throw new OpInputError(
      op,
      'packed',
      `must have ⌈count / 2⌉ = ${packedWords(count)} words, got ${packed.length}`,
    );
  }
}

/** f32 values → f16 pairs, rounded to nearest even; `overflowed` counts finite values that became ±inf. */
export function packF16(values: Float32Array): { packed: Uint32Array; overflowed: number } {
  const packed = new Uint32Array(packedWords(values.length));
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let overflowed = 0;
  for (let i = 0; i < values.length; i++) {
    const half = f32ToF16(values[i]!);
    if (isF16Overflow(bits[i]!, half)) overflowed++;
    packed[i >>> 1]! |= (i & 1 ? half << 16 : half) >>> 0;
  }
  return { packed, overflowed };
}

/** f16 pairs → (count) f32, exactly (every f16 is an f32). */
export function unpackF16(packed: Uint32Array, count: number): Float32Array {
  checkUnpackF16Input(packed, count);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    const word = packed[i >>> 1]!;
    out[i] = f16ToF32(i & 1 ? word >>> 16 : word & 0xffff);
  }
  return out;
}
