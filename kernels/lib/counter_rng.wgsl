// The counter-based uniform of src/util/counter-rng.ts (fmix32, counterUniform) in WGSL, for the
// sampling kernels (nn/sample.wgsl, nn/sample_large.wgsl). MIRROR of that file: change both
// together; the sampling kernels' GPU parity tests fail when they drift apart. Plain u32
// arithmetic (wrapping +, *, ^, >>), so both compute the same bits.

// murmur3's 32-bit finalizer.
fn fmix32(x: u32) -> u32 {
  var h = x;
  h ^= h >> 16u;
  h *= 0x85ebca6bu;
  h ^= h >> 13u;
  h *= 0xc2b2ae35u;
  h ^= h >> 16u;
  return h;
}

// Uniform in [0, 1), a multiple of 2^-24 (exact in f32), a pure function of (seed, step, row).
fn counter_uniform(seed: u32, step: u32, row: u32) -> f32 {
  var h = fmix32(seed ^ 0x9e3779b9u);
  h = fmix32(h + step * 0x85ebca77u);
  h = fmix32(h + row * 0xc2b2ae3du);
  return f32(h >> 8u) / 16777216.0;
}
