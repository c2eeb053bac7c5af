// KL loss gradient: grad[i] *= weights[i], in place. CPU reference: the gradLogp of klLoss() in
// src/ops/kl.ts (aggregation weight · token-local ∂kl/∂logp).
//
// Runs after kernels/kl.wgsl wrote the local derivative into `grad` and the loss aggregation
// (kernels/loss_aggregation_*.wgsl) wrote `weights` = ∂loss/∂kl. One thread per token;
// token = (wid.x + wid.y · num_workgroups.x) · WORKGROUP_SIZE + lid.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> weights: array<f32>;    // (rows, cols)
@group(0) @binding(2) var<storage, read_write> grad: array<f32>; // (rows, cols)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.count) {
    return;
  }
  grad[i] = grad[i] * weights[i];
}
