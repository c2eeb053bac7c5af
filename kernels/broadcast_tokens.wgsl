// out[b, t] = value[b] where mask[b, t] = 1, else 0 (verl: scores.unsqueeze(-1) * response_mask).
// One invocation per element; elements spread over (x, y) workgroups.
// CPU reference: broadcastToTokens in src/ops/broadcast.ts.
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Elements (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
  status_slot: u32, // slot of `seq_values` in `status`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> seq_values: array<f32>; // (rows)
@group(0) @binding(2) var<storage, read> mask: array<f32>;       // (rows, cols) 0/1
@group(0) @binding(3) var<storage, read_write> out: array<f32>;  // (rows, cols)
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.rows * params.cols) {
    return;
  }
  let row = i / params.cols;
  let value = seq_values[row];
  if (i % params.cols == 0u) {
    check_finite(params.status_slot, row, value);
  }
  // A select, not value·m: −3·0 would store −0 at padding.
  out[i] = select(0.0, value, mask[i] != 0.0);
}
