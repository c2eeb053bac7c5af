// Plain copy, 16 bytes per invocation: the bandwidth ceiling benchmarks compare kernels against.
// CPU twin: src/ops/copy.ts.
//
// One vec4<f32> per invocation, no loop, no shared memory: every byte is read once and written
// once, so time ≈ 2 · bytes / bandwidth. Workgroups spread over a 2D grid when there are more than
// 65,535: flat workgroup = wid.x + wid.y * num_workgroups.x, ids past the end do nothing.
// The wrapper rounds the element count up to whole vec4s; both buffers hold that many (pooled
// buffers are 256-byte aligned), and the caller reads back only its own elements.

// Threads per workgroup.
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32, // number of vec4s
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> input: array<vec4<f32>>;        // (count)
@group(0) @binding(2) var<storage, read_write> output: array<vec4<f32>>; // (count)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    output[i] = input[i];
  }
}
