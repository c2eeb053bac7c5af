// Explained variance 1 − Var[R − V] / (Var[R] + epsilon) over unmasked tokens, as a two-pass
// reduction. CPU reference: explainedVariance() in src/ops/explained-variance.ts.
//
// Three entry points share these bindings, dispatched in order:
//   partial_sums     `groups` workgroups, grid-stride over the tokens:
//                    partials[g] = (Σ m, Σ m·R, Σ m·D, 0) with D = R − V, and
//                    partials[2·groups + g] = (max R, −min R, 0, 0) over unmasked tokens; checks R
//                    (slot 0) and V (slot 1) for NaN/Inf, masked tokens included
//   partial_squares  `groups` workgroups: each first reduces partials[0..groups) to the means, then
//                    partials[groups + g] = (Σ m·(R − mean R)², Σ m·(D − mean D)², 0, 0)
//   finish           one workgroup: stats = (ev, defined, Var[R], Var[D], Σ m, mean R, mean D, 0)
// Two passes over the tokens, never E[x²] − E[x]². Variances divide by Σ m − correction; ev is
// defined (stats[1] = 1) only when Σ m > correction and Var[R] + epsilon > 0, else stats[0] = 0.
// Var[R] is exactly 0 when every unmasked return is equal (max R = min R), as in the float64 CPU
// reference: the f32 mean of equal values need not equal them where division is approximate (on
// an NVIDIA H200, 300 returns of 2 left Var[R] = 1.4e-14 and ev = −2.4e13 instead of undefined).
// f32 accumulation. `groups` ≤ 256 keeps the partials small; WORKGROUP_SIZE is a power of two.
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_sum, workgroup_max).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  count: u32,
  groups: u32,
  correction: u32,
  epsilon: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> returns: array<f32>;          // (count)
@group(0) @binding(2) var<storage, read> values: array<f32>;           // (count)
@group(0) @binding(3) var<storage, read> mask: array<f32>;             // (count), 0/1
@group(0) @binding(4) var<storage, read_write> partials: array<vec4f>; // (3 · groups)
@group(0) @binding(5) var<storage, read_write> stats: array<f32>;      // (8)
@group(0) @binding(6) var<storage, read_write> status: array<atomic<u32>>;

// Where `finish` writes each statistic in stats; the wrapper reads them back by these names.
const EV_VALUE: u32 = 0u;
const EV_DEFINED: u32 = 1u;
const EV_VAR_RETURNS: u32 = 2u;
const EV_VAR_RESIDUAL: u32 = 3u;
const EV_TOKENS: u32 = 4u;
const EV_MEAN_RETURNS: u32 = 5u;
const EV_MEAN_RESIDUAL: u32 = 6u;

alias ScratchValue = vec4f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

const LOWEST = -0x1.fffffep+127f; // −FLT_MAX

// Σ of partials[offset .. offset + groups).
fn sum_partials(lid: u32, offset: u32) -> vec4f {
  var acc = vec4f(0.0);
  for (var g = lid; g < params.groups; g += WORKGROUP_SIZE) {
    acc += partials[offset + g];
  }
  scratch[lid] = acc;
  return workgroup_sum(lid);
}

// max of partials[offset .. offset + groups), component-wise.
fn max_partials(lid: u32, offset: u32) -> vec4f {
  var acc = vec4f(LOWEST);
  for (var g = lid; g < params.groups; g += WORKGROUP_SIZE) {
    acc = max(acc, partials[offset + g]);
  }
  scratch[lid] = acc;
  return workgroup_max(lid);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn partial_sums(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  var acc = vec4f(0.0);
  var extremes = vec4f(LOWEST); // (max R, −min R, −, −)
  for (var i = wid.x * WORKGROUP_SIZE + lid; i < params.count; i += params.groups * WORKGROUP_SIZE) {
    let r = returns[i];
    let v = values[i];
    check_finite(0u, i, r);
    check_finite(1u, i, v);
    if (mask[i] != 0.0) {
      acc += vec4f(1.0, r, r - v, 0.0);
      extremes = max(extremes, vec4f(r, -r, LOWEST, LOWEST));
    }
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  scratch[lid] = extremes;
  let range = workgroup_max(lid);
  if (lid == 0u) {
    partials[wid.x] = total;
    partials[2u * params.groups + wid.x] = range;
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn partial_squares(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_index) lid: u32) {
  let sums = sum_partials(lid, 0u);
  let n = max(sums.x, 1.0);
  let mean_r = sums.y / n;
  let mean_d = sums.z / n;
  var acc = vec4f(0.0);
  for (var i = wid.x * WORKGROUP_SIZE + lid; i < params.count; i += params.groups * WORKGROUP_SIZE) {
    if (mask[i] != 0.0) {
      let r = returns[i] - mean_r;
      let d = (returns[i] - values[i]) - mean_d;
      acc += vec4f(r * r, d * d, 0.0, 0.0);
    }
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    partials[params.groups + wid.x] = total;
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn finish(@builtin(local_invocation_index) lid: u32) {
  let sums = sum_partials(lid, 0u);
  let squares = sum_partials(lid, params.groups);
  let range = max_partials(lid, 2u * params.groups);
  if (lid != 0u) {
    return;
  }
  let n = sums.x;
  let correction = f32(params.correction);
  var out = array<f32, 8>(); // zeros; the last slot is padding
  out[EV_TOKENS] = n;
  if (n > correction) {
    let constant = range.x == -range.y; // max R = min R
    let var_r = select(squares.x / (n - correction), 0.0, constant);
    let var_d = squares.y / (n - correction);
    let denominator = var_r + params.epsilon;
    let defined = denominator > 0.0;
    out[EV_VALUE] = select(0.0, 1.0 - var_d / denominator, defined);
    out[EV_DEFINED] = select(0.0, 1.0, defined);
    out[EV_VAR_RETURNS] = var_r;
    out[EV_VAR_RESIDUAL] = var_d;
    out[EV_MEAN_RETURNS] = sums.y / n;
    out[EV_MEAN_RESIDUAL] = sums.z / n;
  }
  for (var k = 0u; k < 8u; k++) {
    stats[k] = out[k];
  }
}
