// f16 weights → f32, for the kernels that compute in f32. CPU twin: src/ops/nn/unpack-f16.ts.
//
//   packed: (⌈count / 2⌉) u32, two IEEE halves each, the lower index in the low 16 bits
//   out: (count) f32
//
// unpack2x16float reads the pairs, so no `shader-f16` feature is needed: a model keeps half the
// memory on any adapter and is widened here, a layer at a time, before its matmuls. One u32 (two
// outputs) per invocation; invocations spread over a 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> packed: array<u32>;      // (⌈count / 2⌉)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (count)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let word = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  let i = word * 2u;
  if (i >= params.count) {
    return;
  }
  let pair = unpack2x16float(packed[word]);
  out[i] = pair.x;
  if (i + 1u < params.count) {
    out[i + 1u] = pair.y;
  }
}
