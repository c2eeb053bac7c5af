// RMSNorm backward, dx part. CPU twin: src/ops/nn/rms-norm.ts.
// dw (a column sum over rows) is kernels/nn/rms_norm_backward_params.wgsl.
//
//   dout, x, dx: (rows, C)   w: (C)   rstd: (rows), from the forward
//   g = dout·w,  xhat = x·rstd
//   dx = rstd · (g − xhat · mean_c(g·xhat))
//
// LayerNorm's dx without the mean term. Rows split over threads as in rms_norm.wgsl; one pass
// reduces Σ g·xhat, one writes dx. With ACCUMULATE the kernel adds into dx (dx += …): in a
// pre-norm block the residual stream's gradient already holds the skip connection's share.

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
@group(0) @binding(3) var<storage, read> w: array<f32>;          // (C)
@group(0) @binding(4) var<storage, read> rstd: array<f32>;       // (rows)
@group(0) @binding(5) var<storage, read_write> dx: array<f32>;   // (rows, C)

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
  if (first_row >= params.rows) {
    return;
  }
  let row = first_row + lid / THREADS_PER_ROW;
  let lane = lid % THREADS_PER_ROW;
  let in_range = row < params.rows;
  let cols = select(0u, params.cols, in_range);
  let base = row * params.cols;
  var r = 0.0;
  if (in_range) {
    r = rstd[row];
  }

  var local_sum = 0.0;
  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    local_sum += dout[base + c] * w[c] * (x[base + c] * r);
  }
  let mean_g_xhat = row_sum(lid, local_sum) / f32(params.cols);

  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    let grad = r * (dout[base + c] * w[c] - x[base + c] * r * mean_g_xhat);
    if (ACCUMULATE) {
      dx[base + c] = dx[base + c] + grad;
    } else {
      dx[base + c] = grad;
    }
  }
}
