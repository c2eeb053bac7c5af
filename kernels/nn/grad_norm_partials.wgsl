// Global gradient norm, stage 1 of 2: per-block partial sums. CPU reference:
// src/ops/nn/grad-norm.ts (gradNorm). Stage 2: grad_norm_finish.wgsl.
//
// Block w (flat workgroup index over (x, y)) covers elements [w·BLOCK, (w+1)·BLOCK) with
// BLOCK = WORKGROUP_SIZE · ITEMS_PER_THREAD; thread lid reads w·BLOCK + k·WORKGROUP_SIZE + lid for
// k < ITEMS_PER_THREAD (coalesced), then a tree reduction. The split depends only on the count, so
// the result is the same every run (deterministic, no atomics).
// partials[3w .. 3w+2] = (Σ g² over finite g, NaN count, ±Inf count). Non-finite values are found
// with bit tests (exponent bits all ones), not x != x, which a compiler may fold away; they are
// counted and left out of Σ g² so the sum itself stays finite.
// The wrapper prepends kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;
override ITEMS_PER_THREAD: u32 = 32u;

struct Params {
  count: u32,   // elements of grads
  blocks: u32,  // ceil(count / BLOCK)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> grads: array<f32>;           // (count)
@group(0) @binding(2) var<storage, read_write> partials: array<f32>;  // (blocks, 3)

alias ScratchValue = vec3f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

const EXPONENT_BITS = 0x7f800000u;
const MANTISSA_BITS = 0x007fffffu;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let w = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so the reduction's barriers stay uniform.
  if (w >= params.blocks) {
    return;
  }
  let base = w * WORKGROUP_SIZE * ITEMS_PER_THREAD;
  var acc = vec3f(0.0);
  for (var k = 0u; k < ITEMS_PER_THREAD; k++) {
    let i = base + k * WORKGROUP_SIZE + lid;
    if (i < params.count) {
      let g = grads[i];
      let bits = bitcast<u32>(g);
      if ((bits & EXPONENT_BITS) != EXPONENT_BITS) {
        acc.x += g * g;
      } else if ((bits & MANTISSA_BITS) != 0u) {
        acc.y += 1.0;
      } else {
        acc.z += 1.0;
      }
    }
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    partials[PARTIAL_FLOATS * w] = total.x;
    partials[PARTIAL_FLOATS * w + 1u] = total.y;
    partials[PARTIAL_FLOATS * w + 2u] = total.z;
  }
}
