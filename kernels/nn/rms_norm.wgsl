// RMSNorm forward (Llama, Qwen2, Qwen3). CPU twin: src/ops/nn/rms-norm.ts.
//
//   x, out: (rows, C)   w: (C)   rstd: (rows)
//   rstd = 1/√(Σ_c x² / C + eps),   out = x·rstd·w
//
// Rows are split over threads as in layer_norm.wgsl: THREADS_PER_ROW threads per row (1 on
// software adapters: no barriers; 32–64 on hardware), groups of rows over a 2D grid past 65,535.
// One reduction pass (Σ x²: no mean is subtracted, so there is no cancellation to guard against)
// and one writing pass, f32 throughout. For Qwen3's per-head q/k norm the same kernel runs with
// rows = tokens·heads and C = head size.

// Threads per workgroup.
override WORKGROUP_SIZE: u32 = 64u;
// Threads sharing one row: a power of two dividing WORKGROUP_SIZE. 1: no barriers at all.
override THREADS_PER_ROW: u32 = 1u;
override ROWS_PER_GROUP: u32 = WORKGROUP_SIZE / THREADS_PER_ROW;

struct Params {
  rows: u32,
  cols: u32,
  eps: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;            // (rows, C)
@group(0) @binding(2) var<storage, read> w: array<f32>;            // (C)
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // (rows, C)
@group(0) @binding(4) var<storage, read_write> rstd: array<f32>;   // (rows)

// row_sum (kernels/lib/row_sum.wgsl, prepended by the wrapper) reduces over scratch.
alias ScratchValue = f32;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let first_row = (wid.x + wid.y * groups.x) * ROWS_PER_GROUP;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (first_row >= params.rows) {
    return;
  }
  let row = first_row + lid / THREADS_PER_ROW;
  let lane = lid % THREADS_PER_ROW;
  // Threads past the last row loop zero times but still reach the barriers.
  let in_range = row < params.rows;
  let cols = select(0u, params.cols, in_range);
  let base = row * params.cols;

  var local_squares = 0.0;
  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    let v = x[base + c];
    local_squares += v * v;
  }
  let r = 1.0 / sqrt(row_sum(lid, local_squares) / f32(params.cols) + params.eps);

  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    out[base + c] = x[base + c] * r * w[c];
  }
  if (in_range && lane == 0u) {
    rstd[row] = r;
  }
}
