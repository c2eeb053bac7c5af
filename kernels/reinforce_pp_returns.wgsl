// Discounted returns-to-go (REINFORCE++), one invocation per row scanning t = T−1 … 0.
// CPU reference: discountedReturns in src/ops/reinforce-pp.ts.
//
// reset = 1 (verl): running = r_t + γ·running; ret_t = running; running ← 0 where m_t = 0.
// reset = 0 (OpenRLHF): r ← r·m, then the same walk without the reset. f32 accumulation.
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Rows (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
  gamma: f32,
  reset: u32,       // 1: maskMode 'reset', 0: 'zero-reward'
  status_slot: u32, // slot of `rewards` in `status`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> rewards: array<f32>;       // (rows, cols)
@group(0) @binding(2) var<storage, read> mask: array<f32>;          // (rows, cols) 0/1
@group(0) @binding(3) var<storage, read_write> returns: array<f32>; // (rows, cols)
@group(0) @binding(4) var<storage, read_write> status: array<atomic<u32>>;

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
  var running = 0.0;
  for (var k = 0u; k < params.cols; k++) {
    let i = base + (params.cols - 1u - k);
    var r = rewards[i];
    let m = mask[i];
    check_finite(params.status_slot, i, r);
    if (params.reset == 0u) {
      r = r * m;
    }
    running = r + params.gamma * running;
    returns[i] = running;
    if (params.reset != 0u && m == 0.0) {
      running = 0.0;
    }
  }
}
