// Gradient of Σ_n dLogp[n]·logp[n] + dEntropy[n]·entropy[n] with respect to the logits.
// CPU reference (and the derivation of ∂H/∂z): src/ops/token-logprobs.ts, tokenLogprobsBackward.
//
// One workgroup per row. Passes 1–2 recompute what the forward kernel computes (row max m;
// s = Σ e and a = Σ e·d with d = (x − m) / T, e = exp(d)); pass 3 writes, with p = e / s and
// d̄ = a / s = Σ p z − m / T:
//   dLogits[v] = (dLogp·(1[v = t] − p_v) − dEntropy·p_v·(d_v − d̄)) / T
// f32 accumulation. Rows beyond 65,535 spread over a 2D grid.
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_max, workgroup_sum).

// Threads per workgroup (and per row); a power of two for the tree reduction.
override WORKGROUP_SIZE: u32 = 256u;
// false: no entropy gradient; `dEntropy` is not read (treated as zero).
override HAS_DENTROPY: bool = true;

struct Params {
  rows: u32,
  cols: u32,
  temperature: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;              // (rows, cols)
@group(0) @binding(2) var<storage, read> targets: array<i32>;             // (rows)
@group(0) @binding(3) var<storage, read> dLogp: array<f32>;               // (rows)
@group(0) @binding(4) var<storage, read> dEntropy: array<f32>;            // (rows)
@group(0) @binding(5) var<storage, read_write> dLogits: array<f32>;       // (rows, cols)
@group(0) @binding(6) var<storage, read_write> status: array<atomic<u32>>; // input status words

// Input-status slots (the order of the wrapper's status tensors).
const SLOT_LOGITS = 0u;
const SLOT_TARGETS = 1u; // index = row of a target outside [0, cols)
const SLOT_DLOGP = 2u;
const SLOT_DENTROPY = 3u;

// (max, max) in pass 1, (Σ e, Σ e·d) in pass 2: both sums reduced in one tree.
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
  let cols = params.cols;
  let base = row * cols;
  let temperature = params.temperature;

  let g = dLogp[row];
  var h = 0.0;
  if (HAS_DENTROPY) {
    h = dEntropy[row];
  }
  let t = targets[row];
  let bad_target = t < 0 || t >= i32(cols);
  if (lid == 0u) {
    check_finite(SLOT_DLOGP, row, g);
    if (HAS_DENTROPY) {
      check_finite(SLOT_DENTROPY, row, h);
    }
    if (bad_target) {
      report_invalid(SLOT_TARGETS, row);
    }
  }

  // Pass 1: row max of the raw logits, and the input check.
  var local_max = bitcast<f32>(0xff7fffffu); // −FLT_MAX: every finite logit is ≥ it
  for (var c = lid; c < cols; c += WORKGROUP_SIZE) {
    let x = logits[base + c];
    check_finite(SLOT_LOGITS, base + c, x);
    local_max = max(local_max, x);
  }
  scratch[lid] = vec2f(local_max);
  let row_max = workgroup_max(lid).x;

  // Pass 2: s = Σ exp(d) and a = Σ exp(d)·d with d = (x − m) / T ≤ 0.
  var local_sum = 0.0;
  var local_weighted = 0.0;
  for (var c = lid; c < cols; c += WORKGROUP_SIZE) {
    let d = (logits[base + c] - row_max) / temperature;
    let e = exp(d);
    local_sum += e;
    local_weighted += select(0.0, e * d, e > 0.0);
  }
  scratch[lid] = vec2f(local_sum, local_weighted);
  let sums = workgroup_sum(lid);
  let inv_sum = 1.0 / sums.x;
  let mean_shifted = sums.y * inv_sum; // d̄ = Σ p d

  // Pass 3: the gradient. A row with a bad target gets NaN, so it cannot pass for a result.
  let nan = runtime_nan();
  for (var c = lid; c < cols; c += WORKGROUP_SIZE) {
    let d = (logits[base + c] - row_max) / temperature;
    let p = exp(d) * inv_sum;
    let on_target = select(0.0, 1.0, i32(c) == t);
    // p = 0 ⇒ the entropy term is 0 (p·log p → 0), even where d − d̄ is −∞.
    let entropy_term = select(0.0, -p * (d - mean_shifted), p > 0.0);
    let grad = (g * (on_target - p) + h * entropy_term) / temperature;
    dLogits[base + c] = select(grad, nan, bad_target);
  }
}
