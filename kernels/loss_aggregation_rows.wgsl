// Loss aggregation, pass 1 of 3: per-row sums. CPU reference: src/ops/loss-aggregation.ts.
//
// One workgroup per row (rows beyond 65,535 spread over a 2D grid). Writes
//   partials[row] = (Σ_t m·ℓ, Σ_t m)   as a (rows, 2) matrix for loss_aggregation_reduce.wgsl
//   weights[i]    = m                   which loss_aggregation_scale.wgsl then scales per row
// and reports non-finite token losses (slot 0) and masks (slot 1) through the input status.
// f32 accumulation. The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokenLoss: array<f32>;      // (rows, cols)
@group(0) @binding(2) var<storage, read> mask: array<f32>;           // (rows, cols), 0/1
@group(0) @binding(3) var<storage, read_write> partials: array<f32>; // (rows, 2)
@group(0) @binding(4) var<storage, read_write> weights: array<f32>;  // (rows, cols)
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>;

alias ScratchValue = vec2f;
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
  var acc = vec2f(0.0);
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    let i = base + c;
    let l = tokenLoss[i];
    let m = mask[i];
    check_finite(0u, i, l);
    check_finite(1u, i, m);
    // select(), not m·ℓ: a masked position contributes exactly 0.
    acc += vec2f(select(0.0, m * l, m != 0.0), m);
    weights[i] = m;
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    partials[2u * row] = total.x;
    partials[2u * row + 1u] = total.y;
  }
}
