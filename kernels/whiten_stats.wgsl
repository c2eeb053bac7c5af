// Masked count, mean and M2 = Σ m·(x − mean)² of a whole tensor, for whitening and for the batch
// std of group advantages. CPU reference: maskedMoments in src/ops/whiten.ts.
//
// Entry point `partial`: one workgroup per chunk of WORKGROUP_SIZE × ITEMS_PER_THREAD elements,
// two passes over its chunk (Σm, Σm·x, min, max; then Σm·(x − mean)²), writing (n, mean, M2,
// min, max) to partials[chunk]. Entry point `merge`: one workgroup combines the chunks with the
// pairwise formula M2 = M2a + M2b + δ²·na·nb/n (δ = mean_b − mean_a), which is exact in exact
// arithmetic and stable in f32 — never E[x²] − E[x]². When min = max the input is constant and
// the result is set to mean = min, M2 = 0 exactly, as on the CPU (zero variance stays zero).
// Counts are f32: exact up to 2^24 unmasked elements.
// Prepended by the wrapper: kernels/lib/input_status.wgsl (check_finite).

// Threads per workgroup, a power of two for the tree reductions.
override WORKGROUP_SIZE: u32 = 256u;
// Elements per thread per chunk in `partial`.
override ITEMS_PER_THREAD: u32 = 16u;

struct Params {
  n: u32,           // elements of x (and of mask)
  num_chunks: u32,  // workgroups of `partial`, entries of `partials`
  has_mask: u32,    // 0: every element counts and `mask` is a stand-in
  status_slot: u32, // slot of `x` in `status`
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;             // (n)
@group(0) @binding(2) var<storage, read> mask: array<f32>;          // (n) 0/1
@group(0) @binding(3) var<storage, read_write> partials: array<f32>; // (num_chunks, 5)
// (8): n, mean, M2, min, max at their STAT_ slots (lib/whiten_stats_layout.wgsl), then zeros.
@group(0) @binding(4) var<storage, read_write> stats: array<f32>;
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>;

struct Moments {
  n: f32,
  mean: f32,
  m2: f32,
  lo: f32,
  hi: f32,
}

const F32_MAX = 3.40282346638528859812e38;

fn empty_moments() -> Moments {
  return Moments(0.0, 0.0, 0.0, F32_MAX, -F32_MAX);
}

fn combine(a: Moments, b: Moments) -> Moments {
  if (b.n == 0.0) {
    return a;
  }
  if (a.n == 0.0) {
    return b;
  }
  let n = a.n + b.n;
  let delta = b.mean - a.mean;
  let mean = a.mean + delta * (b.n / n);
  let m2 = a.m2 + b.m2 + delta * delta * (a.n * (b.n / n));
  return Moments(n, mean, m2, min(a.lo, b.lo), max(a.hi, b.hi));
}

fn weight(i: u32) -> f32 {
  if (params.has_mask == 0u) {
    return 1.0;
  }
  return mask[i];
}

var<workgroup> wg_n: array<f32, WORKGROUP_SIZE>;
var<workgroup> wg_sum: array<f32, WORKGROUP_SIZE>;
var<workgroup> wg_lo: array<f32, WORKGROUP_SIZE>;
var<workgroup> wg_hi: array<f32, WORKGROUP_SIZE>;
var<workgroup> wg_moments: array<Moments, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn partial(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let chunk = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (chunk >= params.num_chunks) {
    return;
  }
  let start = chunk * WORKGROUP_SIZE * ITEMS_PER_THREAD;
  let end = min(start + WORKGROUP_SIZE * ITEMS_PER_THREAD, params.n);

  // Pass 1: count, sum, min, max of the unmasked elements.
  var n = 0.0;
  var sum = 0.0;
  var lo = F32_MAX;
  var hi = -F32_MAX;
  for (var i = start + lid; i < end; i += WORKGROUP_SIZE) {
    let v = x[i];
    check_finite(params.status_slot, i, v);
    if (weight(i) != 0.0) {
      n += 1.0;
      sum += v;
      lo = min(lo, v);
      hi = max(hi, v);
    }
  }
  wg_n[lid] = n;
  wg_sum[lid] = sum;
  wg_lo[lid] = lo;
  wg_hi[lid] = hi;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      wg_n[lid] += wg_n[lid + stride];
      wg_sum[lid] += wg_sum[lid + stride];
      wg_lo[lid] = min(wg_lo[lid], wg_lo[lid + stride]);
      wg_hi[lid] = max(wg_hi[lid], wg_hi[lid + stride]);
    }
  }
  workgroupBarrier();
  let count = wg_n[0];
  let chunk_lo = wg_lo[0];
  let chunk_hi = wg_hi[0];
  var mean = 0.0;
  if (count > 0.0) {
    mean = wg_sum[0] / count;
  }
  if (chunk_lo == chunk_hi) {
    mean = chunk_lo; // constant chunk: exact mean, zero deviations below
  }
  workgroupBarrier();

  // Pass 2: Σ m·(x − mean)², reusing wg_sum.
  var m2 = 0.0;
  for (var i = start + lid; i < end; i += WORKGROUP_SIZE) {
    if (weight(i) != 0.0) {
      let d = x[i] - mean;
      m2 += d * d;
    }
  }
  wg_sum[lid] = m2;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      wg_sum[lid] += wg_sum[lid + stride];
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    let o = chunk * 5u;
    partials[o] = count;
    partials[o + 1u] = mean;
    partials[o + 2u] = wg_sum[0];
    partials[o + 3u] = chunk_lo;
    partials[o + 4u] = chunk_hi;
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn merge(@builtin(local_invocation_index) lid: u32) {
  var acc = empty_moments();
  for (var k = lid; k < params.num_chunks; k += WORKGROUP_SIZE) {
    let o = k * 5u;
    let part = Moments(
      partials[o],
      partials[o + 1u],
      partials[o + 2u],
      partials[o + 3u],
      partials[o + 4u],
    );
    acc = combine(acc, part);
  }
  wg_moments[lid] = acc;
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      wg_moments[lid] = combine(wg_moments[lid], wg_moments[lid + stride]);
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    var total = wg_moments[0];
    if (total.n > 0.0 && total.lo == total.hi) {
      total.mean = total.lo;
      total.m2 = 0.0;
    }
    stats[STAT_COUNT] = total.n;
    stats[STAT_MEAN] = total.mean;
    stats[STAT_M2] = total.m2;
    stats[STAT_LO] = total.lo;
    stats[STAT_HI] = total.hi;
    stats[5] = 0.0;
    stats[6] = 0.0;
    stats[7] = 0.0;
  }
}
