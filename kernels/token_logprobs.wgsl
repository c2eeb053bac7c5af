// Per-token log-probs and entropy of softmax(logits / T). CPU reference: src/ops/token-logprobs.ts
// (and src/ops/entropy.ts for the entropy-only variant, HAS_TARGETS = false).
//
// One workgroup per row, two passes over the row: (1) the row max m; (2) s = Σ e and
// a = Σ e·d together, with d = (x − m) / T and e = exp(d). Then
//   logp    = (x_t − m) / T − log s
//   entropy = log s − a / s            (= lse − Σ p z, since Σ p z − m/T = Σ p d)
// d ≤ 0 keeps exp() in range for any finite logits; both entropy terms are ≥ 0, so there is no
// cancellation. f32 accumulation. Rows beyond 65,535 spread over a 2D grid.
//
// Both passes read the row 8 consecutive floats per loop trip (chunk k = columns 8k .. 8k + 7,
// thread lid takes chunks lid, lid + WORKGROUP_SIZE, …) and work on them as two vec4s; the
// cols % 8 columns left over go one each to the first threads. Fewer trips and wider arithmetic
// (SwiftShader, 512 × 32768: 0.4× the time of one scalar per trip). The loads stay scalar
// (array<f32>), so rows need no 16-byte alignment and every cols takes the same path.
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

// Columns per chunk: two vec4s.
const CHUNK = 8u;
const EXPONENT_BITS = 0x7f800000u;

// Four consecutive logits from flat index i.
fn load4(i: u32) -> vec4f {
  return vec4f(logits[i], logits[i + 1u], logits[i + 2u], logits[i + 3u]);
}

// check_finite on the four logits from flat index i.
fn check_finite4(i: u32) {
  let v = load4(i);
  for (var j = 0u; j < 4u; j++) {
    check_finite(SLOT_LOGITS, i + j, v[j]);
  }
}

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
  let chunks = cols / CHUNK;
  // This thread's leftover column (there are cols % 8 < WORKGROUP_SIZE of them); ≥ cols if none.
  let tail_col = CHUNK * chunks + lid;
  let has_tail = tail_col < cols;

  // Pass 1: row max of the raw logits (dividing by T > 0 keeps the argmax), and the input check.
  // The loop only gathers exponent bits; a thread that saw a non-finite value (exponent all ones)
  // rescans its chunks to report each one, so valid rows pay no per-element branch.
  let lowest = bitcast<f32>(0xff7fffffu); // −FLT_MAX: every finite logit is ≥ it
  var max4 = vec4f(lowest);
  var exponents = vec4u(0u);
  for (var k = lid; k < chunks; k += WORKGROUP_SIZE) {
    let i = base + CHUNK * k;
    let a = load4(i);
    let b = load4(i + 4u);
    max4 = max(max4, max(a, b));
    // Mask before max: raw bit patterns of negative numbers (sign bit set) would hide a NaN.
    let ea = bitcast<vec4u>(a) & vec4u(EXPONENT_BITS);
    let eb = bitcast<vec4u>(b) & vec4u(EXPONENT_BITS);
    exponents = max(exponents, max(ea, eb));
  }
  if (any(exponents == vec4u(EXPONENT_BITS))) {
    for (var k = lid; k < chunks; k += WORKGROUP_SIZE) {
      check_finite4(base + CHUNK * k);
      check_finite4(base + CHUNK * k + 4u);
    }
  }
  var local_max = max(max(max4.x, max4.y), max(max4.z, max4.w));
  if (has_tail) {
    let x = logits[base + tail_col];
    check_finite(SLOT_LOGITS, base + tail_col, x);
    local_max = max(local_max, x);
  }
  scratch[lid] = vec2f(local_max);
  let row_max = workgroup_max(lid).x;

  // Pass 2: s = Σ exp(d) and a = Σ exp(d)·d with d = (x − m) / T ≤ 0, computed as (x − m) · (1/T):
  // one division per thread instead of one per logit.
  // e = 0 where d is hugely negative (or −∞): its share p·d → 0, and 0 · (−∞) must not be NaN;
  // hence the select()s.
  let inv_t = 1.0 / params.temperature;
  var sum4 = vec4f(0.0);
  var weighted4 = vec4f(0.0);
  for (var k = lid; k < chunks; k += WORKGROUP_SIZE) {
    let i = base + CHUNK * k;
    let da = (load4(i) - row_max) * inv_t;
    let db = (load4(i + 4u) - row_max) * inv_t;
    let ea = exp(da);
    let eb = exp(db);
    sum4 += ea + eb;
    let zero = vec4f(0.0);
    weighted4 += select(zero, ea * da, ea > zero) + select(zero, eb * db, eb > zero);
  }
  var local_sum = (sum4.x + sum4.y) + (sum4.z + sum4.w);
  var local_weighted = (weighted4.x + weighted4.y) + (weighted4.z + weighted4.w);
  if (has_tail) {
    let d = (logits[base + tail_col] - row_max) * inv_t;
    let e = exp(d);
    local_sum += e;
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
      // Once per row, so a true division: the target's own term is as exact as before.
      logp[row] = (logits[base + u32(t)] - row_max) / params.temperature - log_sum;
    }
  }
  if (WITH_ENTROPY) {
    entropy[row] = log_sum - sums.y / sums.x;
  }
}
