// One AdamW step (torch.optim.AdamW: decoupled weight decay, bias-corrected moments) over one
// contiguous range of parameters. CPU reference: src/ops/nn/adamw.ts (adamwStep).
//
// One invocation per element, grid over (x, y). Reads from stats (written earlier in the same
// command encoder by grad_norm_finish.wgsl): clipScale, applied and step t, at their STAT_ words
// (kernels/lib/grad_norm_layout.wgsl, prepended by the wrapper).
// When applied = 0 (non-finite gradient norm) it writes nothing: weights, m and v stay as they were.
//   g = grad · clipScale
//   p ← p − lr·wd·p
//   m ← β1·m + (1 − β1)·g;   v ← β2·v + (1 − β2)·g²
//   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps)
// The bias corrections 1 − β^t are computed in f32 from t as −expm1(t·ln β): ln β comes from the
// host in double precision, and a Taylor series near 0 avoids the cancellation of 1 − exp(x) when
// β^t is close to 1 (small t, β2 = 0.999), where it would lose ~3 significant digits.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  one_minus_beta1: f32,  // 1 − β1, from the host in double precision
  one_minus_beta2: f32,  // 1 − β2
  log_beta1: f32,        // ln β1 (a large negative number when β1 = 0)
  log_beta2: f32,        // ln β2
  eps: f32,
  decay: f32,            // 1 − lr·wd
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> weights: array<f32>;  // (count) the parameters
@group(0) @binding(2) var<storage, read> grads: array<f32>;          // (count)
@group(0) @binding(3) var<storage, read_write> m: array<f32>;        // (count) first moment
@group(0) @binding(4) var<storage, read_write> v: array<f32>;        // (count) second moment
@group(0) @binding(5) var<storage, read> stats: array<u32>;          // 4 f32 words, see above

// 1 − β^t = −expm1(x) with x = t·ln β ≤ 0.
fn one_minus_pow(log_beta: f32, t: f32) -> f32 {
  let x = t * log_beta;
  if (x > -0.5) {
    // −expm1(x) = −x·(1 + x/2·(1 + x/3·(…))); the first omitted term is ≤ 0.5^9/9! ≈ 5e-9 relative.
    var s = 1.0 + x / 9.0;
    s = 1.0 + x / 8.0 * s;
    s = 1.0 + x / 7.0 * s;
    s = 1.0 + x / 6.0 * s;
    s = 1.0 + x / 5.0 * s;
    s = 1.0 + x / 4.0 * s;
    s = 1.0 + x / 3.0 * s;
    s = 1.0 + x / 2.0 * s;
    return -x * s;
  }
  return 1.0 - exp(x);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.count || stats[STAT_APPLIED] == 0u) {
    return;
  }
  let scale = bitcast<f32>(stats[STAT_CLIP_SCALE]);
  let t = bitcast<f32>(stats[STAT_STEP]);
  let step_size = params.lr / one_minus_pow(params.log_beta1, t);
  let sqrt_correction2 = sqrt(one_minus_pow(params.log_beta2, t));

  let g = grads[i] * scale;
  let m_new = params.beta1 * m[i] + params.one_minus_beta1 * g;
  let v_new = params.beta2 * v[i] + params.one_minus_beta2 * g * g;
  m[i] = m_new;
  v[i] = v_new;
  let p = weights[i] * params.decay;
  weights[i] = p - step_size * m_new / (sqrt(v_new) / sqrt_correction2 + params.eps);
}
