// y ← α·x + y in place (BLAS's axpy), one element per invocation: the RL step sums its loss
// terms' gradients with it (β·∂KL/∂logp into the policy loss's ∂/∂logp, −c_H·entropy weights,
// c_V·∂value-loss/∂V). CPU twin: src/ops/nn/axpy.ts.
//
//   x, y: (count); x in another buffer than y (WebGPU forbids binding one buffer writable and
//   read in the same dispatch). 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
  alpha: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;           // (count)
@group(0) @binding(2) var<storage, read_write> y: array<f32>;     // (count)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    y[i] = params.alpha * x[i] + y[i];
  }
}
