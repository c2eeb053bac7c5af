// RMSNorm backward, parameter part: dw = Σ_rows dout·x·rstd. CPU twin: src/ops/nn/rms-norm.ts.
// dx is kernels/nn/rms_norm_backward.wgsl.
//
//   dout, x: (rows, C)   rstd: (rows)   dw: (C)
//
// Column sums without atomics, as layer_norm_backward_params.wgsl: each workgroup owns TILE_COLS
// adjacent columns and splits the rows over ROW_LANES lanes; the lanes' partial sums are added in
// lane order, so the result is the same bits on every run. f32 throughout.

// Adjacent columns per workgroup.
override TILE_COLS: u32 = 32u;
// Threads sharing one column, each summing every ROW_LANES-th row.
override ROW_LANES: u32 = 8u;
override WORKGROUP_SIZE: u32 = TILE_COLS * ROW_LANES;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;      // (rows, C)
@group(0) @binding(2) var<storage, read> x: array<f32>;         // (rows, C)
@group(0) @binding(3) var<storage, read> rstd: array<f32>;      // (rows)
@group(0) @binding(4) var<storage, read_write> dw: array<f32>;  // (C)

var<workgroup> partials: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let tile = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so the barrier stays uniform.
  if (tile * TILE_COLS >= params.cols) {
    return;
  }
  let cols = params.cols;
  let col_in_tile = lid % TILE_COLS;
  let lane = lid / TILE_COLS;
  let c = tile * TILE_COLS + col_in_tile;

  var sum = 0.0;
  if (c < cols) {
    for (var r = lane; r < params.rows; r += ROW_LANES) {
      let i = r * cols + c;
      sum += dout[i] * x[i] * rstd[r];
    }
  }
  partials[lid] = sum;
  workgroupBarrier();

  if (lane == 0u && c < cols) {
    var total = partials[col_in_tile];
    for (var l = 1u; l < ROW_LANES; l++) {
      total += partials[l * TILE_COLS + col_in_tile];
    }
    dw[c] = total;
  }
}
