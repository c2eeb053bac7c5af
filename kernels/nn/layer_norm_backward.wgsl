// LayerNorm backward, dx part. CPU twin: src/ops/nn/layer-norm.ts.
// dgamma and dbeta (column sums over rows) are kernels/nn/layer_norm_backward_params.wgsl.
//
//   dout, x, dx: (rows, C)   gamma: (C)   mean, rstd: (rows), from the forward
//   g = dout·gamma,  xhat = (x − mean)·rstd
//   dx = rstd · (g − mean_c(g) − xhat · mean_c(g·xhat))
//
// Rows are split over threads as in layer_norm.wgsl: THREADS_PER_ROW threads per row (1 on
// software adapters: no barriers). One pass reduces Σ g and Σ g·xhat together (vec2), one pass
// writes dx. With ACCUMULATE the kernel adds into dx (dx += …): the residual stream's gradient
// already holds the skip connection's share. f32 throughout; groups of rows spread over a 2D grid.

// Threads per workgroup.
override WORKGROUP_SIZE: u32 = 64u;
// Threads sharing one row: a power of two dividing WORKGROUP_SIZE. 1: no barriers at all.
override THREADS_PER_ROW: u32 = 1u;
override ROWS_PER_GROUP: u32 = WORKGROUP_SIZE / THREADS_PER_ROW;
// true: dx += result; false: dx = result.
override ACCUMULATE: bool = false;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;       // (rows, C)
@group(0) @binding(2) var<storage, read> x: array<f32>;          // (rows, C)
@group(0) @binding(3) var<storage, read> gamma: array<f32>;      // (C)
@group(0) @binding(4) var<storage, read> mean: array<f32>;       // (rows)
@group(0) @binding(5) var<storage, read> rstd: array<f32>;       // (rows)
@group(0) @binding(6) var<storage, read_write> dx: array<f32>;   // (rows, C)

// row_sum (kernels/lib/row_sum.wgsl, prepended by the wrapper) reduces over scratch.
alias ScratchValue = vec2f;
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
  var mu = 0.0;
  var r = 0.0;
  if (in_range) {
    mu = mean[row];
    r = rstd[row];
  }

  // (Σ g, Σ g·xhat) over the row.
  var local_sums = vec2f(0.0);
  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    let g = dout[base + c] * gamma[c];
    let xhat = (x[base + c] - mu) * r;
    local_sums += vec2f(g, g * xhat);
  }
  let means = row_sum(lid, local_sums) / f32(params.cols);

  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    let g = dout[base + c] * gamma[c];
    let xhat = (x[base + c] - mu) * r;
    let grad = r * (g - means.x - xhat * means.y);
    if (ACCUMULATE) {
      dx[base + c] = dx[base + c] + grad;
    } else {
      dx[base + c] = grad;
    }
  }
}
