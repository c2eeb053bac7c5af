// Elementwise out = a + b (residual connections), one element per invocation.
// CPU twin: src/ops/nn/add.ts (add). In-place acc += x is kernels/nn/add_into.wgsl.
//
//   a, b, out: (count); out in another buffer than a and b (WebGPU forbids binding one buffer
//   writable and read in the same dispatch, even at disjoint ranges). 2D grid past 65,535
//   workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;           // (count)
@group(0) @binding(2) var<storage, read> b: array<f32>;           // (count)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;   // (count)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    out[i] = a[i] + b[i];
  }
}
