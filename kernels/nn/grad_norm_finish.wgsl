// Global gradient norm, stage 2 of 2: one workgroup sums the partials of grad_norm_partials.wgsl
// (fixed order, deterministic) and writes the optimizer's stats. CPU reference:
// src/ops/nn/grad-norm.ts (gradNorm, clipScale), PyTorch clip_grad_norm_ semantics.
//
// stats (4 f32, bound as u32 words so that NaN / Inf can be written without float constants):
//   [0] gradNorm   ‖g‖₂; NaN if any g is NaN, +Inf if any is ±Inf or Σ g² overflows f32
//   [1] clipScale  min(1, max_norm / (norm + 1e-6)), or 1 when max_norm = 0 (clipping off); 0 if
//                  the norm is not finite
//   [2] applied    1 if the norm is finite (the optimizer step runs), else 0
//   [3] step       the optimizer's step count, + 1 only when applied
// The wrapper prepends kernels/lib/grad_norm_layout.wgsl (PARTIAL_FLOATS, the STAT_ words) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  blocks: u32,    // partials hold 3 floats per block
  max_norm: f32,  // > 0: clip to this norm; 0: no clipping
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partials: array<f32>;      // (blocks, 3)
@group(0) @binding(2) var<storage, read_write> stats: array<u32>;   // 4 f32 words

alias ScratchValue = vec3f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

const EXPONENT_BITS = 0x7f800000u;
const NAN_BITS = 0x7fc00000u;
const ONE_BITS = 0x3f800000u;  // 1.0
const CLIP_EPS = 1e-6;         // PyTorch clip_grad_norm_

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
  var acc = vec3f(0.0);
  for (var j = lid; j < params.blocks; j += WORKGROUP_SIZE) {
    let p = PARTIAL_FLOATS * j;
    acc += vec3f(partials[p], partials[p + 1u], partials[p + 2u]);
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid != 0u) {
    return;
  }
  // Σ g² of finite values can still overflow f32 (|g| ≳ 1.8e19): test its bits, not sqrt's.
  let overflow = (bitcast<u32>(total.x) & EXPONENT_BITS) == EXPONENT_BITS;
  let norm = sqrt(total.x);
  if (total.y > 0.0) {
    stats[STAT_GRAD_NORM] = NAN_BITS;
    stats[STAT_CLIP_SCALE] = 0u;
    stats[STAT_APPLIED] = 0u;
  } else if (total.z > 0.0 || overflow) {
    stats[STAT_GRAD_NORM] = EXPONENT_BITS;  // +Inf
    stats[STAT_CLIP_SCALE] = 0u;
    stats[STAT_APPLIED] = 0u;
  } else {
    var scale = 1.0;
    if (params.max_norm > 0.0) {
      scale = min(1.0, params.max_norm / (norm + CLIP_EPS));
    }
    stats[STAT_GRAD_NORM] = bitcast<u32>(norm);
    stats[STAT_CLIP_SCALE] = bitcast<u32>(scale);
    stats[STAT_APPLIED] = ONE_BITS;
    stats[STAT_STEP] = bitcast<u32>(bitcast<f32>(stats[STAT_STEP]) + 1.0);
  }
}
