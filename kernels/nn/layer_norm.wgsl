// LayerNorm forward. CPU twin: src/ops/nn/layer-norm.ts.
//
//   x, out: (rows, C)   gamma, beta: (C)   mean, rstd: (rows)
//   out = (x − mean)·rstd·gamma + beta,  rstd = 1/√(var + eps),  var biased (PyTorch LayerNorm).
//
// THREADS_PER_ROW threads share a row, so one workgroup holds WORKGROUP_SIZE / THREADS_PER_ROW
// rows (groups of rows spread over a 2D grid past 65,535). On hardware GPUs 32–64 threads share a
// row (coalesced loads, a short tree over workgroup memory); on a software adapter one thread owns
// a row: every barrier and every workgroup costs a context switch there, and measured on
// SwiftShader a thread per row ran 4096 × 256 about 6× faster than a 32-thread workgroup per row.
//
// Two reduction passes over the row (Σ d; then Σ (d − m)²) and one writing pass, f32 throughout.
// d = x − x[row, 0]: shifting by one element of the row keeps the sums at the scale of the
// spread when the row sits far from zero (x ≈ 1000 + noise): x − shift is exact for nearby
// values, and the output never goes through the rounded mean shift + m.

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
@group(0) @binding(2) var<storage, read> gamma: array<f32>;        // (C)
@group(0) @binding(3) var<storage, read> beta: array<f32>;         // (C)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;    // (rows, C)
@group(0) @binding(5) var<storage, read_write> mean: array<f32>;   // (rows)
@group(0) @binding(6) var<storage, read_write> rstd: array<f32>;   // (rows)

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
  // Threads past the last row loop zero times but still reach every barrier.
  let in_range = row < params.rows;
  let cols = select(0u, params.cols, in_range);
  let base = row * params.cols;
  var shift = 0.0;
  if (in_range) {
    shift = x[base];
  }

  // Pass 1: m = mean of d = x − shift.
  var local_sum = 0.0;
  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    local_sum += x[base + c] - shift;
  }
  let m = row_sum(lid, local_sum) / f32(params.cols);

  // Pass 2: biased variance Σ (d − m)² / C.
  var local_squares = 0.0;
  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    let centered = (x[base + c] - shift) - m;
    local_squares += centered * centered;
  }
  let r = 1.0 / sqrt(row_sum(lid, local_squares) / f32(params.cols) + params.eps);

  for (var c = lane; c < cols; c += THREADS_PER_ROW) {
    out[base + c] = ((x[base + c] - shift) - m) * r * gamma[c] + beta[c];
  }
  if (in_range && lane == 0u) {
    mean[row] = shift + m;
    rstd[row] = r;
  }
}
