// KL in the reward: penalized per-token rewards and the batch's mean sequence KL. CPU reference:
// klRewardPenalty() in src/ops/kl.ts. `kl` is the per-token estimate kernels/kl.wgsl wrote (still
// resident), so the estimator is not computed again here.
//
// Entry point `rows`: one workgroup per row (rows beyond 65,535 spread over a 2D grid):
//   rewards[i] = tokenRewards[i] − β · m_i · kl_i
//   rowMean[row] = Σ_t m·kl / Σ_t m   (0 for a row with an empty mask)
// Entry point `mean`: one workgroup, after `rows` in the same pass:
//   klMean[0] = Σ_rows rowMean / rows   (verl's current_kl for the KL controller)
// Non-finite tokenRewards / kl (slots 0, 1) are reported through the input status, masked tokens
// included, as the CPU reference checks them all. f32 accumulation.
// The wrapper prepends kernels/lib/input_status.wgsl (check_finite) and
// kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  cols: u32,
  beta: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokenRewards: array<f32>;    // (rows, cols)
@group(0) @binding(2) var<storage, read> kl: array<f32>;              // (rows, cols)
@group(0) @binding(3) var<storage, read> mask: array<f32>;            // (rows, cols), 0/1
@group(0) @binding(4) var<storage, read_write> rewards: array<f32>;   // (rows, cols)
@group(0) @binding(5) var<storage, read_write> rowMean: array<f32>;   // (rows)
@group(0) @binding(6) var<storage, read_write> klMean: array<f32>;    // (1)
@group(0) @binding(7) var<storage, read_write> status: array<atomic<u32>>;

// (Σ m·kl, Σ m) per row in `rows`; (Σ rowMean, unused) in `mean`.
alias ScratchValue = vec2f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn rows(
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
    let r = tokenRewards[i];
    let k = kl[i];
    check_finite(0u, i, r);
    check_finite(1u, i, k);
    let m = mask[i];
    rewards[i] = r - params.beta * m * k;
    acc += vec2f(m * k, m);
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    rowMean[row] = select(0.0, total.x / total.y, total.y > 0.0);
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn mean(@builtin(local_invocation_index) lid: u32) {
  var acc = vec2f(0.0);
  for (var r = lid; r < params.rows; r += WORKGROUP_SIZE) {
    acc.x += rowMean[r];
  }
  scratch[lid] = acc;
  let total = workgroup_sum(lid);
  if (lid == 0u) {
    klMean[0] = total.x / f32(params.rows);
  }
}
