// Row sums of a (rows, cols) token tensor: score_b = Σ_t x[b, t]
// (verl: token_level_rewards.sum(dim=-1)).
// One invocation per row, f32 accumulation. CPU reference: sumOverTokens in src/ops/broadcast.ts.
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Rows (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
  status_slot: u32, // slot of `tokens` in `status`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<f32>;     // (rows, cols)
@group(0) @binding(2) var<storage, read_write> sums: array<f32>; // (rows)
@group(0) @binding(3) var<storage, read_write> status: array<atomic<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (row >= params.rows) {
    return;
  }
  let base = row * params.cols;
  var sum = 0.0;
  for (var t = 0u; t < params.cols; t++) {
    let x = tokens[base + t];
    check_finite(params.status_slot, base + t, x);
    sum += x;
  }
  sums[row] = sum;
}
