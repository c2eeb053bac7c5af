// Per-token log-probs and entropy of softmax(logits / T). CPU reference: src/ops/token-logprobs.ts
// (and src/ops/entropy.ts for the entropy-only variant, HAS_TARGETS = false).
//
// One workgroup per row and ONE pass over the row ("online" softmax): each thread keeps its own
// running max m and, relative to it, s = Σ e and a = Σ e·d with d = (x − m) / T and e = exp(d).
// When a larger max m' arrives, both are moved to it exactly as the math says:
//   δ = (m − m') / T ≤ 0,  α = exp(δ),  s' = α·s,  a' = α·(a + δ·s)      (d' = d + δ)
// The threads then agree on the row max M (a max-tree) and move their (s, a) to it the same way
// before a sum-tree. Finally
//   logp    = (x_t − M) / T − log s
//   entropy = log s − a / s            (= lse − Σ p z, since Σ p z − M/T = Σ p d)
// d ≤ 0 keeps exp() in range for any finite logits, and a ≤ 0 throughout (δ ≤ 0, a ≤ 0), so both
// entropy terms are ≥ 0: no cancellation. f32 accumulation. Rows beyond 65,535 spread over a 2D
// grid. One read of the logits instead of two.
//
// Reads: a trip is QUADS_PER_TRIP · 4 · WORKGROUP_SIZE columns; each thread loads all its quads of
// a trip before using any (so that many loads are in flight), through read_quad() from
// kernels/lib/row_reads_vec4.wgsl (16-byte loads, rows whose length is a multiple of 4) or
// row_reads_scalar.wgsl (any length); both keep each load instruction of a warp on one contiguous
// run. The columns after the last full trip go one at a time. Chosen by
// bench/offline/token-logprobs-variants.mjs on an NVIDIA H200 (Dawn, Vulkan, 4096 × 32768, GPU
// time of one dispatch). In the GPU's slower state (as after idling; presumably lower clocks):
// 2 scalar quads 0.350 ms, 4 vec4 quads 0.305 ms, a read-only vec4 sum of the same buffer
// 0.301 ms. In its faster state: 4 vec4 quads 0.132 ms, 4 scalar quads 0.131 ms, the read-only
// sum 0.126 ms (3.9 and 4.3 TB/s).
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite),
// kernels/lib/workgroup_reduce.wgsl (workgroup_max, workgroup_sum) and one of the row_reads files
// (RowElement, read_quad, read_logit).

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
@group(0) @binding(1) var<storage, read> logits: array<RowElement>;       // (rows, cols)
@group(0) @binding(2) var<storage, read> targets: array<i32>;             // (rows)
@group(0) @binding(3) var<storage, read_write> logp: array<f32>;          // (rows)
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>;       // (rows)
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>; // input status words

// Input-status slots (the order of the wrapper's status tensors).
const SLOT_LOGITS = 0u;
const SLOT_TARGETS = 1u; // index = row of a target outside [0, cols)

// (running max, non-finite flag) for the row max, then (Σ e, Σ e·d): each reduced in one tree.
alias ScratchValue = vec2f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

// Quads (4 columns) per thread per trip.
const QUADS_PER_TRIP = 4u;
const EXPONENT_BITS = 0x7f800000u;
const LOWEST = -0x1.fffffep+127f; // −FLT_MAX: every finite logit is ≥ it

// One thread's running softmax sums, relative to its own running max m.
struct Running {
  m: f32,
  s: f32, // Σ exp(d)
  a: f32, // Σ exp(d)·d, ≤ 0
}

// The sums moved from r.m to a max m2 ≥ r.m. An empty state (s = 0) stays empty: its m may be
// −FLT_MAX, where δ would be −∞ and δ·s NaN. Where α underflows to 0 everything before vanishes
// (a' = 0, not 0 · (−∞)).
fn rebase(r: Running, m2: f32, inv_t: f32) -> Running {
  if (r.s == 0.0) {
    return Running(m2, 0.0, 0.0);
  }
  let delta = (r.m - m2) * inv_t;
  let alpha = exp(delta);
  return Running(m2, alpha * r.s, select(0.0, alpha * (r.a + delta * r.s), alpha > 0.0));
}

// Adds four logits (already ≤ r.m) to the sums. e = 0 where d is hugely negative: its share
// e·d → 0, and 0 · (−∞) must not be NaN; hence the select().
fn accumulate4(r: Running, x: vec4f, inv_t: f32) -> Running {
  let d = (x - r.m) * inv_t;
  let e = exp(d);
  let zero = vec4f(0.0);
  let ed = select(zero, e * d, e > zero);
  return Running(r.m, r.s + (e.x + e.y) + (e.z + e.w), r.a + (ed.x + ed.y) + (ed.z + ed.w));
}

// The same for one logit (the columns after the last full trip).
fn accumulate1(r: Running, x: f32, inv_t: f32) -> Running {
  let d = (x - r.m) * inv_t;
  let e = exp(d);
  return Running(r.m, r.s + e, r.a + select(0.0, e * d, e > 0.0));
}

// Reports every non-finite logit of the row, the threads taking columns lid, lid + w, … (only run
// for a row where some thread saw one; that thread's own columns depend on the read layout).
fn report_non_finite(base: u32, cols: u32, lid: u32) {
  for (var c = lid; c < cols; c += WORKGROUP_SIZE) {
    check_finite(SLOT_LOGITS, base + c, read_logit(base + c));
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row_index = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (row_index >= params.rows) {
    return;
  }
  let cols = params.cols;
  let base = row_index * cols;
  let inv_t = 1.0 / params.temperature; // one division per thread, not one per logit
  let w = WORKGROUP_SIZE;
  let span = 4u * QUADS_PER_TRIP * w;
  let full_trips = cols / span;

  // The max is taken on the raw logits (dividing by T > 0 keeps the argmax). The loop only
  // gathers exponent bits for the input check; where a thread saw a non-finite value (exponent all
  // ones), the max-tree says so and the workgroup rescans the row to report each one, so valid
  // rows pay no per-element branch.
  var r = Running(LOWEST, 0.0, 0.0);
  var exponents = vec4u(0u);
  for (var t = 0u; t < full_trips; t++) {
    let start = base + t * span;
    var x: array<vec4f, QUADS_PER_TRIP>;
    for (var k = 0u; k < QUADS_PER_TRIP; k++) {
      x[k] = read_quad(start, k, lid);
    }
    var m4 = x[0];
    for (var k = 1u; k < QUADS_PER_TRIP; k++) {
      m4 = max(m4, x[k]);
    }
    let trip_max = max(max(m4.x, m4.y), max(m4.z, m4.w));
    if (trip_max > r.m) {
      r = rebase(r, trip_max, inv_t);
    }
    for (var k = 0u; k < QUADS_PER_TRIP; k++) {
      r = accumulate4(r, x[k], inv_t);
      // Mask before max: raw bit patterns of negative numbers (sign bit set) would hide a NaN.
      exponents = max(exponents, bitcast<vec4u>(x[k]) & vec4u(EXPONENT_BITS));
    }
  }
  for (var c = full_trips * span + lid; c < cols; c += w) {
    let x = read_logit(base + c);
    if (x > r.m) {
      r = rebase(r, x, inv_t);
    }
    r = accumulate1(r, x, inv_t);
    exponents.x = max(exponents.x, bitcast<u32>(x) & EXPONENT_BITS);
  }
  let saw_non_finite = any(exponents == vec4u(EXPONENT_BITS));

  // (row max, 1 if any thread saw a non-finite logit) in one max-tree.
  scratch[lid] = vec2f(r.m, select(0.0, 1.0, saw_non_finite));
  let reduced = workgroup_max(lid);
  let row_max = reduced.x;
  if (reduced.y > 0.0) {
    report_non_finite(base, cols, lid);
  }
  r = rebase(r, row_max, inv_t);
  scratch[lid] = vec2f(r.s, r.a);
  let sums = workgroup_sum(lid);

  if (lid != 0u) {
    return;
  }
  // A row with a non-finite logit gives NaN, made explicitly: WGSL does not promise that NaN or ∞
  // propagate through max() and exp(), and a trusted caller (a training step, no status buffer)
  // learns of the bad row from these outputs.
  if (reduced.y > 0.0) {
    if (HAS_TARGETS) {
      logp[row_index] = runtime_nan();
    }
    if (WITH_ENTROPY) {
      entropy[row_index] = runtime_nan();
    }
    return;
  }
  let log_sum = log(sums.x);
  if (HAS_TARGETS) {
    let t = targets[row_index];
    if (t < 0 || t >= i32(cols)) {
      report_invalid(SLOT_TARGETS, row_index);
      logp[row_index] = runtime_nan();
    } else {
      // Once per row, so a true division: the target's own term is as exact as before.
      logp[row_index] = (read_logit(base + u32(t)) - row_max) / params.temperature - log_sum;
    }
  }
  if (WITH_ENTROPY) {
    entropy[row_index] = log_sum - sums.y / sums.x;
  }
}
