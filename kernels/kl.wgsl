// Per-token KL estimate and its derivative with respect to logp. CPU reference: perTokenKl() in
// src/ops/kl.ts (estimators k1, k2, k3, abs; verl / OpenRLHF / no clamping).
//
// One thread per token; token = (wid.x + wid.y · num_workgroups.x) · WORKGROUP_SIZE + lid, so more
// than 65,535 workgroups spread over a 2D grid. Every token's inputs are checked for NaN/Inf
// (slots 0 = logp, 1 = refLogp), masked ones included, as the CPU reference checks them all.
// f32 throughout.

override WORKGROUP_SIZE: u32 = 64u;
// 0 = k1, 1 = k2, 2 = k3, 3 = abs: the order of KL_ESTIMATORS in src/ops/kl.ts.
override ESTIMATOR: u32 = 2u;
// 0 = verl, 1 = openrlhf, 2 = none: the order of KL_CLAMPS in src/ops/kl.ts.
override CLAMP: u32 = 0u;

const VALUE_BOUND: f32 = 10.0;          // KL_VALUE_BOUND
const VERL_LOG_RATIO_BOUND: f32 = 20.0; // VERL_K3_LOG_RATIO_BOUND
// OpenRLHF computes exp(log r) unclamped; above this log r the k3 value is far beyond 10 and gets
// clamped anyway, so capping log r here only keeps exp() finite without changing any result.
const OPENRLHF_EXP_CAP: f32 = 80.0;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logp: array<f32>;       // (rows, cols)
@group(0) @binding(2) var<storage, read> refLogp: array<f32>;    // (rows, cols)
@group(0) @binding(3) var<storage, read> mask: array<f32>;       // (rows, cols), 0/1
@group(0) @binding(4) var<storage, read_write> kl: array<f32>;   // (rows, cols)
@group(0) @binding(5) var<storage, read_write> grad: array<f32>; // (rows, cols): ∂kl/∂logp
@group(0) @binding(6) var<storage, read_write> status: array<atomic<u32>>;

// (eˣ − x − 1, 1 − eˣ). Below |x| = 0.03 a Taylor series replaces exp(): in f32, eˣ − x − 1
// would lose most digits there (and could round below 0); the series' truncation error,
// ~x⁶/720, is below f32 resolution.
fn k3_and_slope(x: f32) -> vec2f {
  if (abs(x) < 0.03) {
    let value = x * x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x / 120.0)));
    let slope = -x * (1.0 + x * (0.5 + x * (1.0 / 6.0 + x * (1.0 / 24.0 + x / 120.0))));
    return vec2f(value, slope);
  }
  let ex = exp(x);
  return vec2f(ex - x - 1.0, 1.0 - ex);
}

// #region estimators
// (value, ∂value/∂logp) for delta = logp − refLogp; the derivative is 0 where a clamp is active.
fn estimate(delta: f32) -> vec2f {
  var value: f32;
  var g: f32;
  switch ESTIMATOR {
    case 0u: {
      value = delta;
      g = 1.0;
    }
    case 1u: {
      value = 0.5 * delta * delta;
      g = delta;
    }
    case 3u: {
      value = abs(delta);
      g = sign(delta);
    }
    default: {
      // k3 with x = log r = refLogp − logp: eˣ − x − 1, and ∂/∂logp = 1 − eˣ.
      var x = -delta;
      var x_free = true;
      if (CLAMP == 0u && abs(x) > VERL_LOG_RATIO_BOUND) {
        x = clamp(x, -VERL_LOG_RATIO_BOUND, VERL_LOG_RATIO_BOUND);
        x_free = false;
      }
      if (CLAMP == 1u) {
        x = min(x, OPENRLHF_EXP_CAP);
      }
      let k3 = k3_and_slope(x);
      value = k3.x;
      g = select(0.0, k3.y, x_free);
      if (CLAMP == 0u && abs(value) > VALUE_BOUND) {
        value = sign(value) * VALUE_BOUND;
        g = 0.0;
      }
    }
  }
  if (CLAMP == 1u && abs(value) > VALUE_BOUND) {
    value = sign(value) * VALUE_BOUND;
    g = 0.0;
  }
  return vec2f(value, g);
}
// #endregion estimators

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.count) {
    return;
  }
  let lp = logp[i];
  let ref_lp = refLogp[i];
  check_finite(0u, i, lp);
  check_finite(1u, i, ref_lp);
  var out = vec2f(0.0);
  if (mask[i] != 0.0) {
    out = estimate(lp - ref_lp);
  }
  kl[i] = out.x;
  grad[i] = out.y;
}
