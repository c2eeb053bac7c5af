// Group outcome advantages (GRPO, Dr. GRPO, TRL scale_rewards, RLOO), one invocation per group of
// G contiguous scores. CPU reference: groupAdvantagesCore in src/ops/group-advantages.ts.
//
// Two passes over the group, shifted by its first score s0 so a constant group is exact:
// d_i = s_i − s0, mean = s0 + Σd/G, M2 = Σ (d_i − Σd/G)². A group whose scores are all equal is
// zero-std: advantages exactly 0, flagged in group_stats. std_mode 2 ('batch') divides by the std
// of all B scores, taken from batch_stats (whiten_stats.wgsl over the scores, run first).
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Groups (invocations) per workgroup.
override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  num_groups: u32,
  group_size: u32,
  rloo: u32,          // 1: leave-one-out baseline, 0: GRPO family
  std_mode: u32,      // 0 'none', 1 'group', 2 'batch'
  unbiased: u32,      // 1: std with n − 1
  epsilon: f32,       // added to the std before dividing
  singles_mean0: u32, // G = 1: 1 → mean 0, std 1 (verl); 0 → own mean, std 0 (zero-std)
  status_slot: u32,   // slot of `scores` in `status`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> scores: array<f32>;            // (B)
// The moments of all B scores (whiten_stats.wgsl layout) when std_mode = 2, else a stand-in.
@group(0) @binding(2) var<storage, read> batch_stats: array<f32>;
@group(0) @binding(3) var<storage, read_write> advantages: array<f32>;  // (B)
// (num_groups, STATS_PER_GROUP): mean, std, zero-std flag (1.0 / 0.0) at their GROUP_ slots.
@group(0) @binding(4) var<storage, read_write> group_stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>;

// Where each group's statistics go in group_stats; the wrapper reads them back by these names.
const GROUP_MEAN: u32 = 0u;
const GROUP_STD: u32 = 1u;
const GROUP_ZERO_STD: u32 = 2u;
const STATS_PER_GROUP: u32 = 3u;

fn batch_std() -> f32 {
  let count = batch_stats[STAT_COUNT];
  if (batch_stats[STAT_LO] == batch_stats[STAT_HI]) {
    return 0.0; // all B scores equal
  }
  if (params.unbiased != 0u) {
    if (count > 1.0) {
      return sqrt(batch_stats[STAT_M2] / (count - 1.0));
    }
    return 0.0;
  }
  return sqrt(batch_stats[STAT_M2] / count);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let k = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (k >= params.num_groups) {
    return;
  }
  let g = params.group_size;
  let gf = f32(g);
  let base = k * g;
  let s0 = scores[base];

  // Pass 1: Σ d and whether every score equals s0.
  var sum_d = 0.0;
  var all_equal = true;
  for (var i = 0u; i < g; i++) {
    let s = scores[base + i];
    check_finite(params.status_slot, base + i, s);
    sum_d += s - s0;
    all_equal = all_equal && s == s0;
  }
  let mean_d = sum_d / gf;

  var mean = s0 + mean_d;
  var sigma = 0.0;
  var zero_std = false;
  if (g == 1u) {
    if (params.singles_mean0 != 0u) {
      mean = 0.0;
      sigma = 1.0;
    } else {
      mean = s0;
      zero_std = true;
    }
  } else if (all_equal) {
    mean = s0;
    zero_std = true;
  } else {
    // Pass 2: Σ (d − mean_d)².
    var m2 = 0.0;
    for (var i = 0u; i < g; i++) {
      let c = (scores[base + i] - s0) - mean_d;
      m2 += c * c;
    }
    var denom = gf;
    if (params.unbiased != 0u) {
      denom = gf - 1.0;
    }
    sigma = sqrt(m2 / denom);
  }
  let at = k * STATS_PER_GROUP;
  group_stats[at + GROUP_MEAN] = mean;
  group_stats[at + GROUP_STD] = sigma;
  group_stats[at + GROUP_ZERO_STD] = select(0.0, 1.0, zero_std);

  // #region std-divisor
  var scale_std = sigma;
  if (params.std_mode == 2u) {
    scale_std = batch_std();
  }
  // #region group-advantages
  for (var i = 0u; i < g; i++) {
    let s = scores[base + i];
    var adv = 0.0;
    if (!zero_std) {
      if (params.rloo != 0u) {
        // s_i − (Σ − s_i)/(G − 1) = (G·d_i − Σd)/(G − 1); a group of one has baseline 0.
        adv = s;
        if (g > 1u) {
          adv = (gf * (s - s0) - sum_d) / (gf - 1.0);
        }
      } else {
        var centered = s - mean; // groups of one (mean 0)
        if (g > 1u) {
          centered = (s - s0) - mean_d;
        }
        adv = centered;
        if (params.std_mode != 0u) {
          adv = centered / (scale_std + params.epsilon);
        }
      }
    }
    advantages[base + i] = adv;
    // #endregion group-advantages
    // #endregion std-divisor
  }
}
