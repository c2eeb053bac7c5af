// Clipped value loss, pass 1: per-token loss, local derivative and per-row partial sums.
// CPU reference: valueLoss() in src/ops/value-loss.ts. The loss aggregation's reduce and scale
// passes (kernels/loss_aggregation_reduce.wgsl, loss_aggregation_scale.wgsl) follow.
//
// One workgroup per row (rows beyond 65,535 spread over a 2D grid). Per token, with c the clip range:
//   vClipped = old + clamp(v − old, −c, c)    l1 = (v − R)²    l2 = (vClipped − R)²
//   tokenLoss = m · max(l1, l2)
//   grad      = m · [l2 ≤ l1] · (v − R)      = ∂(½ℓ)/∂v, scaled per row by the aggregation later
// and per row, as the aggregation's partials (rows, PARTIALS), at the COL_ slots below:
//   (Σ_t m · ½ℓ, Σ_t m, Σ_t m · [l2 > l1])
// so the reduce pass yields ½ · aggregate(ℓ) and the clip fraction, and its row scales turn grad
// into ∂loss/∂vpreds. Non-finite vpreds / oldValues / returns (slots 0, 1, 2) are reported through
// the input status, masked tokens included. f32 accumulation.
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
  clip: u32,        // 1: clip to ±cliprange; 0: cliprangeValue null, ℓ = l1
  cliprange: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> vpreds: array<f32>;          // (rows, cols)
@group(0) @binding(2) var<storage, read> oldValues: array<f32>;       // (rows, cols)
@group(0) @binding(3) var<storage, read> returns: array<f32>;         // (rows, cols)
@group(0) @binding(4) var<storage, read> mask: array<f32>;            // (rows, cols), 0/1
@group(0) @binding(5) var<storage, read_write> tokenLoss: array<f32>; // (rows, cols)
@group(0) @binding(6) var<storage, read_write> grad: array<f32>;      // (rows, cols)
@group(0) @binding(7) var<storage, read_write> partials: array<f32>;  // (rows, PARTIALS)

// Columns of a row's partials; the wrapper (src/gpu/kernels/value-loss.ts) reads them from here.
const COL_LOSS_SUM: u32 = 0u;
const COL_TOKENS: u32 = 1u;
const COL_CLIPFRAC: u32 = 2u;
const PARTIALS: u32 = 3u;
@group(0) @binding(8) var<storage, read_write> status: array<atomic<u32>>;

alias ScratchValue = vec3f;
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
  var acc = vec3f(0.0);
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    let i = base + c;
    let v = vpreds[i];
    let old = oldValues[i];
    let ret = returns[i];
    check_finite(0u, i, v);
    check_finite(1u, i, old);
    check_finite(2u, i, ret);
    let l1 = (v - ret) * (v - ret);
    var l2 = l1;
    if (params.clip != 0u) {
      // Inside the clip range vClipped is v itself: old + (v − old) could round away from v in
      // f32 and fake a clip.
      let step = v - old;
      let v_clipped = select(
        old + clamp(step, -params.cliprange, params.cliprange),
        v,
        abs(step) <= params.cliprange,
      );
      l2 = (v_clipped - ret) * (v_clipped - ret);
    }
    let on = mask[i] != 0.0;
    let clipped = l2 > l1;
    let loss = select(0.0, max(l1, l2), on);
    tokenLoss[i] = loss;
    grad[i] = select(0.0, v - ret, on && !clipped);
    acc += vec3f(0.5 * loss, select(0.0, 1.0, on), select(0.0, 1.0, on && clipped));
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    partials[PARTIALS * row + COL_LOSS_SUM] = total.x;
    partials[PARTIALS * row + COL_TOKENS] = total.y;
    partials[PARTIALS * row + COL_CLIPFRAC] = total.z;
  }
}
