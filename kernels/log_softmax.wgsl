// Row-wise log-softmax. CPU reference: src/ops/log-softmax.ts.
//
// One workgroup per row. Two reduction passes over the row (max; then Σ exp(z − max)), then one
// pass that writes z − max − log Σ. All accumulation in f32; the max shift keeps exp() in range.
// Rows beyond 65,535 spread over a 2D grid: row = wid.x + wid.y * num_workgroups.x.
// The wrapper prepends kernels/lib/workgroup_reduce.wgsl (workgroup_max, workgroup_sum).

// Threads per workgroup (and per row); a power of two for the tree reduction.
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;      // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (rows, cols)

alias ScratchValue = f32;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (row >= params.rows) {
    return;
  }
  let base = row * params.cols;

  // Pass 1: row max.
  var local_max = bitcast<f32>(0xff7fffffu); // −FLT_MAX: every finite logit is ≥ it
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    local_max = max(local_max, logits[base + c]);
  }
  scratch[lid] = local_max;
  let row_max = workgroup_max(lid);

  // Pass 2: Σ exp(z − max).
  var local_sum = 0.0;
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    local_sum += exp(logits[base + c] - row_max);
  }
  scratch[lid] = local_sum;
  let log_sum = log(workgroup_sum(lid));

  // Write (z − max) − log Σ: shifting first keeps f32 precision when |z| is large.
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    out[base + c] = (logits[base + c] - row_max) - log_sum;
  }
}
