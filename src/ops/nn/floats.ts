/**
 * The layer ops in src/ops/nn/ run in two precisions with one implementation: Float32Array for
 * parity with the WGSL kernels, Float64Array for finite-difference gradient checks. Outputs take
 * the precision of the first float input.
 */
export type Floats = Float32Array | Float64Array;

/** Integer inputs (token ids). */
export type Ints = Int32Array | Uint32Array;

/** A zero-filled array of `length` elements with the same element type as `like`. */
export function zerosLike<T extends Floats>(like: T, length: number): T {
  return (like instanceof Float64Array ? new Float64Array(length) : new Float32Array(length)) as T;
}
