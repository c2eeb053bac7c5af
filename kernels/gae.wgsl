// Generalized advantage estimation, one invocation per row scanning t = T−1 … 0.
// CPU reference (and the exact recurrences): src/ops/gae.ts.
//
// mask_mode 'skip' (verl): a masked step computes δ but leaves nextValue and lastGae unchanged.
// mask_mode 'zero-step' (OpenRLHF, TRL): r and v are multiplied by the mask, every step counts.
// dones[t] = 1 resets nextValue and lastGae to 0 before step t; bootstrap[row] is the initial
// nextValue. f32 recurrence. Rows beyond one grid dimension spread over (x, y):
// row = (wid.x + wid.y * num_workgroups.x) * WORKGROUP_SIZE + lid.
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Rows (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
  gamma: f32,
  lambda: f32,
  zero_step: u32,     // 1: maskMode 'zero-step', 0: 'skip'
  has_dones: u32,     // 0: `dones` is a stand-in buffer and is not read
  has_bootstrap: u32, // 0: `bootstrap` is a stand-in buffer and is not read
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> rewards: array<f32>;          // (rows, cols)
@group(0) @binding(2) var<storage, read> values: array<f32>;           // (rows, cols)
@group(0) @binding(3) var<storage, read> mask: array<f32>;             // (rows, cols) 0/1
@group(0) @binding(4) var<storage, read> dones: array<f32>;            // (rows, cols) 0/1
@group(0) @binding(5) var<storage, read> bootstrap: array<f32>;        // (rows)
@group(0) @binding(6) var<storage, read_write> advantages: array<f32>; // (rows, cols)
@group(0) @binding(7) var<storage, read_write> returns: array<f32>;    // (rows, cols)
// Slots: 0 rewards, 1 values, 2 bootstrapValue.
@group(0) @binding(8) var<storage, read_write> status: array<atomic<u32>>;

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
  var next_value = 0.0;
  if (params.has_bootstrap != 0u) {
    next_value = bootstrap[row];
    check_finite(2u, row, next_value);
  }
  var last_gae = 0.0;
  let gamma_lambda = params.gamma * params.lambda;
  let base = row * params.cols;
  // #region recursion
  for (var k = 0u; k < params.cols; k++) {
    let i = base + (params.cols - 1u - k);
    var r = rewards[i];
    var v = values[i];
    let m = mask[i];
    check_finite(0u, i, r);
    check_finite(1u, i, v);
    if (params.has_dones != 0u && dones[i] != 0.0) {
      // The episode ends after this step: nothing flows back across the boundary.
      next_value = 0.0;
      last_gae = 0.0;
    }
    if (params.zero_step != 0u) {
      r = r * m;
      v = v * m;
    }
    let delta = r + params.gamma * next_value - v;
    let g = delta + gamma_lambda * last_gae;
    if (params.zero_step != 0u || m != 0.0) {
      next_value = v;
      last_gae = g;
    }
    advantages[i] = last_gae;
    returns[i] = last_gae + v;
  }
  // #endregion recursion
}
