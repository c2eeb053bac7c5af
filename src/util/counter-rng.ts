/**
 * A counter-based random number: a pure function of three u32 counters (seed, step, row), so the
 * GPU can draw the random number of any row of any generation step without a stored RNG state, and
 * the CPU twin can draw the same one.
 *
 * MIRRORED IN WGSL: kernels/lib/counter_rng.wgsl (`fmix32`, `counter_uniform`, prepended to
 * kernels/nn/sample.wgsl and sample_large.wgsl) computes the same bits with plain u32 arithmetic
 * (wrapping +, *, ^, >>). Change both together; the sampling kernels' GPU parity tests fail when
 * they drift apart.
 *
 * Construction: each counter is folded into a running 32-bit hash and mixed with murmur3's
 * finalizer fmix32 (a bijection on u32 with full avalanche: every input bit flips each output bit
 * with probability ≈ 1/2). Multiplying step and row by odd constants before adding keeps each
 * stage a bijection of that counter, so distinct (step, row) under one seed never collide within a
 * stage, and neighbouring rows land on unrelated hashes.
 */

const GOLDEN = 0x9e3779b9; // 2^32 / φ, the usual seed offset (avoids fmix32(0) = 0)
const STEP_MUL = 0x85ebca77; // odd: x ↦ x · STEP_MUL is a bijection on u32
const ROW_MUL = 0xc2b2ae3d; // odd, different from STEP_MUL

/** murmur3's 32-bit finalizer; input and output are u32 (as JS numbers ≥ 0). */
export function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The 32-bit hash of (seed, step, row); counterUniform keeps its top 24 bits. */
export function counterHash(seed: number, step: number, row: number): number {
  let h = fmix32((seed ^ GOLDEN) >>> 0);
  h = fmix32((h + Math.imul(step >>> 0, STEP_MUL)) >>> 0);
  h = fmix32((h + Math.imul(row >>> 0, ROW_MUL)) >>> 0);
  return h;
}

/**
 * Uniform in [0, 1) with 24 random bits, a pure function of three u32 counters. The value is a
 * multiple of 2^-24, so it is exactly representable in f32 and the WGSL twin gets the same number.
 */
export function counterUniform(seed: number, step: number, row: number): number {
  return (counterHash(seed, step, row) >>> 8) / 16777216;
}
