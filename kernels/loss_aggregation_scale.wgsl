// Loss aggregation, pass 3 of 3: values[r, t] *= rowScale[r], in place.
// CPU reference: the weights of aggregateChecked() in src/ops/loss-aggregation.ts.
//
// Turns the mask copy written by loss_aggregation_rows.wgsl into the weights ∂loss/∂ℓ, and a
// token-local derivative into ∂loss/∂logp (policy loss) — one elementwise pass either way.
// One thread per element; element = (wid.x + wid.y · num_workgroups.x) · WORKGROUP_SIZE + lid.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  count: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> values: array<f32>; // (rows, cols)
@group(0) @binding(2) var<storage, read> rowScale: array<f32>;     // (rows)

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
  values[i] = values[i] * rowScale[i / params.cols];
}
