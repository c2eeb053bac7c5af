// Elementwise acc += x in place (gradient accumulation into the residual stream), one element per
// invocation. CPU twin: src/ops/nn/add.ts (addInto).
//
//   acc, x: (count); x in another buffer than acc (WebGPU forbids binding one buffer writable
//   and read in the same dispatch). 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> acc: array<f32>;   // (count)
@group(0) @binding(2) var<storage, read> x: array<f32>;           // (count)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    acc[i] = acc[i] + x[i];
  }
}
