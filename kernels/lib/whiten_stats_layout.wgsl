// Where whiten_stats.wgsl writes the masked statistics and whiten_apply.wgsl reads them back; the
// TypeScript wrapper (src/gpu/kernels/whiten.ts) reads these same constants to name what it reads.
// The buffer holds 8 floats: these 5, then padding.
const STAT_COUNT: u32 = 0u;
const STAT_MEAN: u32 = 1u;
const STAT_M2: u32 = 2u;
const STAT_LO: u32 = 3u;
const STAT_HI: u32 = 4u;
