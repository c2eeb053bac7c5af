// The layout the gradient-norm kernels and AdamW share; the TypeScript wrappers read these same
// constants (src/gpu/kernels/nn/grad-norm.ts checks them against GRAD_STATS of
// src/ops/nn/grad-norm.ts when loaded).
// Floats per stage-1 partial of grad_norm_partials.wgsl: Σ g² of finite values, NaN count, ±Inf
// count.
const PARTIAL_FLOATS: u32 = 3u;
// Words of the optimizer's stats (4 f32) that grad_norm_finish.wgsl writes and adamw.wgsl reads.
const STAT_GRAD_NORM: u32 = 0u;
const STAT_CLIP_SCALE: u32 = 1u;
const STAT_APPLIED: u32 = 2u;
const STAT_STEP: u32 = 3u;
