// out = m · ((x − mean) · rsqrt(var + ε))       epsilonMode 'add'
// out = m · ((x − mean) · rsqrt(max(var, ε)))   epsilonMode 'clamp'
// plus the mean when shift_mean = 0, from the stats that whiten_stats.wgsl wrote.
// One invocation per element; elements spread over (x, y) workgroups.
// CPU reference: whiten in src/ops/whiten.ts (same degenerate-mask rules: Σm = 0 → all zeros;
// Σm = 1 with unbiased → variance 0).

// Elements (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  n: u32,          // elements of x
  unbiased: u32,   // 1: variance = M2 / (n − 1)
  clamp: u32,      // 1: epsilonMode 'clamp', 0: 'add'
  epsilon: f32,
  shift_mean: u32, // 0: add the mean back
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;        // (n)
@group(0) @binding(2) var<storage, read> mask: array<f32>;     // (n) 0/1
@group(0) @binding(3) var<storage, read> stats: array<f32>;    // whiten_stats.wgsl layout
@group(0) @binding(4) var<storage, read_write> out: array<f32>; // (n)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.n) {
    return;
  }
  let count = stats[STAT_COUNT];
  let mean = stats[STAT_MEAN];
  var variance = 0.0;
  if (params.unbiased != 0u) {
    if (count > 1.0) {
      variance = stats[STAT_M2] / (count - 1.0);
    }
  } else if (count > 0.0) {
    variance = stats[STAT_M2] / count;
  }
  var denom = variance + params.epsilon;
  if (params.clamp != 0u) {
    denom = max(variance, params.epsilon);
  }
  let scale = 1.0 / sqrt(denom);
  var shift = 0.0;
  if (params.shift_mean == 0u) {
    shift = mean;
  }
  out[i] = select(0.0, (x[i] - mean) * scale + shift, mask[i] != 0.0);
}
