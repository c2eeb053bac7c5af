// Per-token log-probs and entropy of softmax(logits / T). CPU reference: src/ops/token-logprobs.ts
// (and src/ops/entropy.ts for the entropy-only variant, HAS_TARGETS = false).
//
// One workgroup per row, two passes over the row: (1) the row max m; (2) s = Σ e and
// a = Σ e·d together, with d = (x − m) / T and e = exp(d). Then
//   logp    = (x_t − m) / T − log s
//   entropy = log s − a / s            (= lse − Σ p z, since Σ p z − m/T = Σ p d)
// d ≤ 0 keeps exp() in range for any finite logits; both entropy terms are ≥ 0, so there is no
// cancellation. f32 accumulation. Rows beyond 65,535 spread over a 2D grid.
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_max, workgroup_sum).

// Threads per workgroup (and per row); a power of two for the tree reduction.
override WORKGROUP_SIZE: u32 = 256u;
// false: entropy only (entropyFromLogits); `targets` and `logp` are then neither read nor written.
override HAS_TARGETS: bool = true;
// false: log-probs only; `entropy` is not written.
override WITH_ENTROPY: bool = true;

struct Params {
  rows: u32,
  cols: u32,
  temperature: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;              // (rows, cols)
@group(0) @binding(2) var<storage, read> targets: array<i32>;             // (rows)
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;          // (rows)
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;       // (rows)
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>; // input status words

// Input-status slots (the order of the wrapper's status tensors).
const SLOT_LOGITS = 0u;
const SLOT_TARGETS = 1u; // index = row of a target outside [0, cols)

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

  // Pass 1: row max of the raw logits (dividing by T > 0 keeps the argmax), and the input check.
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
    let d = (logits[base + c] - row_max) / params.temperature;
    let e = exp(d);
    local_sum += e;
    // e = 0 where d is hugely negative (or −∞): its share p·d → 0, and 0 · (−∞) must not be NaN.
    local_weighted += select(0.0, e * d, e > 0.0);
  }
  scratch[lid] = vec2f(local_sum, local_weighted);
  let sums = workgroup_sum(lid);

  if (lid != 0u) {
    return;
  }
  let log_sum = log(sums.x);
  if (HAS_TARGETS) {
    let t = targets[row];
    if (t < 0 || t >= i32(cols)) {
      report_invalid(SLOT_TARGETS, row);
      logp[row] = runtime_nan();
    } else {
      logp[row] = (logits[base + u32(t)] - row_max) / params.temperature - log_sum;
    }
  }
  if (WITH_ENTROPY) {
    entropy[row] = log_sum - sums.y / sums.x;
  }
}
