// Policy loss, pass 1: per-token losses, token-local gradients and per-row sums.
// CPU reference: src/ops/policy-loss.ts. Then loss_aggregation_reduce.wgsl reduces the rows (loss,
// per-row scales, statistics) and loss_aggregation_scale.wgsl scales `gradLogp` by row.
//
// One workgroup per row (rows beyond 65,535 spread over a 2D grid). Per token, with Δ = logp − old:
//   tokenLoss[i]  = ℓ (0 where masked)
//   gradLogp[i]   = m·∂ℓ/∂logp, token-local (ppo, gspo 'token', reinforce); for gspo 'sequence'
//                   the row's coupled gradient m·s·G/max(n, 1) with G = Σ_t m·∂ℓ_t/∂s
//   partials[row] = (Σ m·ℓ, Σ m, then the 7 statistic numerators), at the COL_ slots below
// Non-finite inputs are reported per tensor through the input status (slots: logp, oldLogp,
// advantages, mask). f32 throughout.

override WORKGROUP_SIZE: u32 = 64u;

// params.loss_type; the wrapper (src/gpu/kernels/policy-loss.ts) reads these codes from here.
const LOSS_PPO: u32 = 0u;
const LOSS_GSPO_TOKEN: u32 = 1u;
const LOSS_GSPO_SEQUENCE: u32 = 2u;
const LOSS_REINFORCE: u32 = 3u;
const GSPO_LOG_RATIO_MAX: f32 = 10.0;

// Columns of a row's partials. The reduce pass (loss_aggregation_reduce.wgsl) turns column k ≥ 2
// into statistic k − 2; the wrapper checks at load that the COL_ names after the first two are
// POLICY_LOSS_STATS in order (src/ops/policy-loss.ts), and reads PARTIALS from here.
const COL_LOSS_SUM: u32 = 0u;
const COL_TOKENS: u32 = 1u;
const COL_PG_CLIPFRAC: u32 = 2u;
const COL_PG_CLIPFRAC_LOWER: u32 = 3u;
const COL_PPO_KL: u32 = 4u;
const COL_CLIP_RATIO_LOW_MEAN: u32 = 5u;
const COL_CLIP_RATIO_HIGH_MEAN: u32 = 6u;
const COL_CLIP_RATIO_REGION_MEAN: u32 = 7u;
const COL_APPROX_KL_HALF_SQ: u32 = 8u;
const PARTIALS: u32 = 9u;

struct Params {
  rows: u32,
  cols: u32,
  loss_type: u32,
  clip_low: f32,
  clip_high: f32,
  // 0 = off for each of these three (every valid value is > 0).
  dual_clip: f32,
  log_ratio_clamp: f32,
  delta: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logp: array<f32>;            // (rows, cols)
@group(0) @binding(2) var<storage, read> oldLogp: array<f32>;         // (rows, cols)
@group(0) @binding(3) var<storage, read> advantages: array<f32>;      // (rows, cols)
@group(0) @binding(4) var<storage, read> mask: array<f32>;            // (rows, cols), 0/1
@group(0) @binding(5) var<storage, read_write> tokenLoss: array<f32>; // (rows, cols)
@group(0) @binding(6) var<storage, read_write> gradLogp: array<f32>;  // (rows, cols)
@group(0) @binding(7) var<storage, read_write> partials: array<f32>;  // (rows, PARTIALS)
@group(0) @binding(8) var<storage, read_write> status: array<atomic<u32>>;

// Three vec4 lanes per thread: 12 sums reduced in one tree (12 KiB at 256 threads).
var<workgroup> scratch_a: array<vec4f, WORKGROUP_SIZE>;
var<workgroup> scratch_b: array<vec4f, WORKGROUP_SIZE>;
var<workgroup> scratch_c: array<vec4f, WORKGROUP_SIZE>;

fn reduce_all(lid: u32) {
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      scratch_a[lid] = scratch_a[lid] + scratch_a[lid + stride];
      scratch_b[lid] = scratch_b[lid] + scratch_b[lid + stride];
      scratch_c[lid] = scratch_c[lid] + scratch_c[lid + stride];
    }
  }
  workgroupBarrier();
}

struct Token {
  loss: f32,
  d_ratio: f32,   // ∂ℓ/∂ratio
  clipped: f32,   // 1[l2 > l1]
  dual_hit: f32,  // 1[lClip > −A·c ∧ A < 0]
  low: f32,       // 1[r1 < 1 − clip_low ∧ A < 0]
  high: f32,      // 1[r1 > 1 + clip_high ∧ A > 0]
}

// #region clipped-surrogate
// The clipped surrogate of one token as a function of its ratio (see clippedSurrogate() on the CPU).
fn clipped_surrogate(ratio: f32, a: f32, dual_clip: f32) -> Token {
  let capped = params.delta > 0.0 && ratio > params.delta;
  let r1 = select(ratio, params.delta, capped);
  let lo = 1.0 - params.clip_low;
  let hi = 1.0 + params.clip_high;
  let r2 = clamp(ratio, lo, hi);
  let l1 = -a * r1;
  let l2 = -a * r2;
  let take_l1 = l1 >= l2;
  var t: Token;
  t.loss = select(l2, l1, take_l1);
  if (take_l1) {
    t.d_ratio = select(-a, 0.0, capped);
  } else {
    t.d_ratio = select(0.0, -a, ratio >= lo && ratio <= hi);
  }
  t.dual_hit = 0.0;
  if (dual_clip > 0.0 && a < 0.0) {
    let l3 = -a * dual_clip;
    if (t.loss > l3) {
      t.loss = l3;
      t.d_ratio = 0.0;
      t.dual_hit = 1.0;
    }
  }
  t.clipped = select(0.0, 1.0, l2 > l1);
  t.low = select(0.0, 1.0, r1 < lo && a < 0.0);
  t.high = select(0.0, 1.0, r1 > hi && a > 0.0);
  return t;
}
// #endregion clipped-surrogate

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
  let kind = params.loss_type;
  let gspo = kind == LOSS_GSPO_TOKEN || kind == LOSS_GSPO_SEQUENCE;

  // GSPO: the row's mean Δ first (the finiteness checks happen in the main loop below).
  var ratio_row = 1.0;
  var gate_row = 1.0;
  if (gspo) {
    var acc = vec4f(0.0);
    for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
      let m = mask[base + c];
      acc += vec4f(select(0.0, m * (logp[base + c] - oldLogp[base + c]), m != 0.0), m, 0.0, 0.0);
    }
    scratch_a[lid] = acc;
    scratch_b[lid] = vec4f(0.0);
    scratch_c[lid] = vec4f(0.0);
    reduce_all(lid);
    let seq_log_ratio = scratch_a[0].x / max(scratch_a[0].y, 1.0);
    workgroupBarrier();
    if (kind == LOSS_GSPO_TOKEN) {
      // verl: clamp(max = 10) of the detached form; no gradient through the clamp.
      ratio_row = exp(min(seq_log_ratio, GSPO_LOG_RATIO_MAX));
      gate_row = select(0.0, 1.0, seq_log_ratio <= GSPO_LOG_RATIO_MAX);
    } else {
      ratio_row = exp(seq_log_ratio);
    }
  }

  // a: (Σ m·ℓ, Σ m, clipped, dual_hit); b: (ppo_kl, low, high, region); c: (½Δ², G, –, –)
  var sum_a = vec4f(0.0);
  var sum_b = vec4f(0.0);
  var sum_c = vec4f(0.0);
  for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
    let i = base + c;
    let lp = logp[i];
    let old = oldLogp[i];
    let a = advantages[i];
    let m = mask[i];
    check_finite(0u, i, lp);
    check_finite(1u, i, old);
    check_finite(2u, i, a);
    check_finite(3u, i, m);
    if (m == 0.0) {
      tokenLoss[i] = 0.0;
      gradLogp[i] = 0.0;
      continue;
    }
    let delta = lp - old;
    var lr = delta;
    var loss = 0.0;
    var local = 0.0;
    var stat = vec4f(0.0); // clipped, dual_hit, low, high
    if (kind == LOSS_REINFORCE) {
      loss = -a * lp;
      local = -a;
    } else {
      var ratio = ratio_row;
      var gate = gate_row;
      var dual_clip = 0.0;
      if (kind == LOSS_PPO) {
        let bound = params.log_ratio_clamp;
        if (bound > 0.0 && abs(delta) > bound) {
          lr = sign(delta) * bound;
          gate = 0.0;
        }
        ratio = exp(lr);
        dual_clip = params.dual_clip;
      }
      let t = clipped_surrogate(ratio, a, dual_clip);
      loss = t.loss;
      // gspo 'sequence' keeps ∂ℓ/∂s for the row sum G; the others are token-local.
      local = select(t.d_ratio * ratio * gate, t.d_ratio, kind == LOSS_GSPO_SEQUENCE);
      stat = vec4f(t.clipped, t.dual_hit, t.low, t.high);
    }
    tokenLoss[i] = loss;
    gradLogp[i] = local;
    sum_a += vec4f(loss, 1.0, stat.x, stat.y);
    sum_b += vec4f(-lr, stat.z, stat.w, max(stat.z, stat.w));
    sum_c += vec4f(0.5 * delta * delta, local, 0.0, 0.0);
  }
  scratch_a[lid] = sum_a;
  scratch_b[lid] = sum_b;
  scratch_c[lid] = sum_c;
  reduce_all(lid);
  let total_a = scratch_a[0];
  let total_b = scratch_b[0];
  let total_c = scratch_c[0];
  if (lid == 0u) {
    let p = row * PARTIALS;
    partials[p + COL_LOSS_SUM] = total_a.x;
    partials[p + COL_TOKENS] = total_a.y;
    partials[p + COL_PG_CLIPFRAC] = total_a.z;
    partials[p + COL_PG_CLIPFRAC_LOWER] = total_a.w;
    partials[p + COL_PPO_KL] = total_b.x;
    partials[p + COL_CLIP_RATIO_LOW_MEAN] = total_b.y;
    partials[p + COL_CLIP_RATIO_HIGH_MEAN] = total_b.z;
    partials[p + COL_CLIP_RATIO_REGION_MEAN] = total_b.w;
    partials[p + COL_APPROX_KL_HALF_SQ] = total_c.x;
  }

  // gspo 'sequence': ∂loss/∂logp_t = scale_row · m_t · s · G / max(n, 1); scale_row comes later.
  if (kind == LOSS_GSPO_SEQUENCE) {
    let coupling = ratio_row * total_c.y / max(total_a.y, 1.0);
    for (var c = lid; c < params.cols; c += WORKGROUP_SIZE) {
      gradLogp[base + c] = select(0.0, coupling, mask[base + c] != 0.0);
    }
  }
}
