// Seeded token sampling: temperature → top-k → top-p, one token per row.
// CPU twin (and the exact algorithm): src/ops/nn/sample.ts.
//
// One workgroup per row, rows spread over (x, y): row = wid.x + wid.y * num_workgroups.x.
//   1. load the row's logits and token ids into workgroup memory, padded to P = next power of two
//      ≥ V (P ≤ 1024); padding entries (id ≥ V) sort after every real token;
//   2. bitonic sort: logit descending, ties by lower id (a strict total order, so the result is
//      the CPU's order exactly);
//   3. e_j = exp((l_j − l_max) / T) for the first `kept` positions (top-k), 0 after; an inclusive
//      scan (each thread a contiguous chunk, then a Hillis–Steele scan of the chunk totals) turns
//      `keys` into cumulative sums;
//   4. top-p: n = 1 + first position whose cumulative ≥ top_p · Σ_kept e (kept when none);
//   5. u = counter_uniform(seed, step, row); the token is the first position j < n whose cumulative
//      exceeds u · Σ_{<n} e, clamped to the last position with e > 0 (rounding guard);
//      logprob = (l − l_max) / T − log Σ_{<n} e.
// All accumulation in f32. Temperature 0 is greedy: position 0 of the sorted order, logprob 0.
// Workgroup memory: 8 · PADDED bytes (keys, ids; ≤ 8 KiB) + 4 · WORKGROUP_SIZE (scan) + 3 atomics.

// Threads per workgroup (and per row); a power of two.
override WORKGROUP_SIZE: u32 = 256u;
// P: the sort length, the next power of two ≥ vocab (≤ 1024). A pipeline constant rather than a
// uniform so the workgroup arrays (zero-initialised for every workgroup) are only as big as needed.
override PADDED: u32 = 1024u;
const NONE: u32 = 0xffffffffu;
// exp(−104) is 0 in f32: clamping keeps the exponent finite for tiny temperatures.
const MIN_EXPONENT: f32 = -104.0;

struct Params {
  rows: u32,
  vocab: u32,
  kept: u32,         // tokens kept by top-k: min(top_k, vocab), vocab when top-k is off
  seed: u32,
  step: u32,
  temperature: f32,  // > 0, or 0 = greedy
  top_p: f32,        // (0, 1]; 1 = off
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;          // (rows, vocab)
@group(0) @binding(2) var<storage, read_write> tokens: array<u32>;    // (rows), i32 or u32 ids
@group(0) @binding(3) var<storage, read_write> logprobs: array<f32>;  // (rows)

var<workgroup> keys: array<f32, PADDED>;   // sorted logits, then cumulative Σ e
var<workgroup> ids: array<u32, PADDED>;    // token id at each sorted position
var<workgroup> partial: array<f32, WORKGROUP_SIZE>;
var<workgroup> cut_at: atomic<u32>;           // first position reaching top-p
var<workgroup> pick_at: atomic<u32>;          // first position whose cumulative exceeds u · Σ
var<workgroup> last_positive: atomic<u32>;    // last kept position with e > 0

// fmix32 and counter_uniform: kernels/lib/counter_rng.wgsl, prepended by the wrapper.

// Does (ka, ia) go before (kb, ib)? Larger logit first, ties by lower id; padding (id ≥ vocab) last.
fn before(ka: f32, ia: u32, kb: f32, ib: u32) -> bool {
  let a_real = ia < params.vocab;
  let b_real = ib < params.vocab;
  if (a_real != b_real) {
    return a_real;
  }
  if (!a_real) {
    return ia < ib;
  }
  return ka > kb || (ka == kb && ia < ib);
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
  let base = row * params.vocab;
  let P = PADDED;

  // 1. Load (padding keys are never compared: before() orders padding by id alone).
  for (var i = lid; i < P; i += WORKGROUP_SIZE) {
    var key = 0.0;
    if (i < params.vocab) {
      key = logits[base + i];
    }
    keys[i] = key;
    ids[i] = i;
  }
  if (lid == 0u) {
    atomicStore(&cut_at, NONE);
    atomicStore(&pick_at, NONE);
  }
  workgroupBarrier();

  // 2. Bitonic sort of P entries; each thread compares P / 2 / WORKGROUP_SIZE pairs per stage.
  for (var k = 2u; k <= P; k <<= 1u) {
    for (var j = k >> 1u; j > 0u; j >>= 1u) {
      for (var t = lid; t < P / 2u; t += WORKGROUP_SIZE) {
        let a = 2u * j * (t / j) + (t % j); // bit j of a is clear; its partner is a + j
        let b = a + j;
        // Blocks with bit k clear end in `before` order, the others reversed.
        let forward = (a & k) == 0u;
        let ka = keys[a];
        let ia = ids[a];
        let kb = keys[b];
        let ib = ids[b];
        if (before(kb, ib, ka, ia) == forward) {
          keys[a] = kb;
          ids[a] = ib;
          keys[b] = ka;
          ids[b] = ia;
        }
      }
      workgroupBarrier();
    }
  }

  if (params.temperature == 0.0) {
    // Greedy: the argmax, lowest id on ties; a point mass, so logprob 0.
    if (lid == 0u) {
      tokens[row] = ids[0];
      logprobs[row] = 0.0;
    }
    return;
  }

  // 3. e_j and their inclusive scan, in place in keys. Thread lid owns [start, start + chunk).
  let lmax = keys[0];
  workgroupBarrier(); // everyone has read keys[0] before it is overwritten
  let temperature = params.temperature;
  let chunk = max(P / WORKGROUP_SIZE, 1u);
  let start = lid * chunk;
  var running = 0.0;
  for (var c = 0u; c < chunk; c++) {
    let i = start + c;
    if (i < P) {
      var e = 0.0;
      if (i < params.kept) {
        e = exp(max((keys[i] - lmax) / temperature, MIN_EXPONENT));
        if (e > 0.0) {
          atomicMax(&last_positive, i);
        }
      }
      running += e;
      keys[i] = running;
    }
  }
  partial[lid] = running;
  // Only the first min(WORKGROUP_SIZE, P) threads own positions; the rest hold 0 and need no scan.
  for (var d = 1u; d < min(WORKGROUP_SIZE, P); d <<= 1u) {
    workgroupBarrier();
    var add = 0.0;
    if (lid >= d) {
      add = partial[lid - d];
    }
    workgroupBarrier();
    partial[lid] += add;
  }
  workgroupBarrier();
  var offset = 0.0;
  if (lid > 0u) {
    offset = partial[lid - 1u];
  }
  for (var c = 0u; c < chunk; c++) {
    let i = start + c;
    if (i < P) {
      keys[i] += offset;
    }
  }
  workgroupBarrier();

  // 4. Top-p: n = 1 + the first position whose cumulative reaches top_p · Σ_kept e.
  let kept = params.kept;
  if (params.top_p < 1.0) {
    let nucleus_mass = params.top_p * keys[kept - 1u];
    for (var c = 0u; c < chunk; c++) {
      let i = start + c;
      if (i < kept && keys[i] >= nucleus_mass) {
        atomicMin(&cut_at, i);
        break;
      }
    }
  }
  workgroupBarrier();
  let cut = atomicLoad(&cut_at);
  let n = select(kept, cut + 1u, cut < kept);

  // 5. Inverse CDF at u · Σ_{<n} e.
  let total = keys[n - 1u];
  let threshold = counter_uniform(params.seed, params.step, row) * total;
  for (var c = 0u; c < chunk; c++) {
    let i = start + c;
    if (i < n && keys[i] > threshold) {
      atomicMin(&pick_at, i);
      break;
    }
  }
  workgroupBarrier();
  if (lid == 0u) {
    // Rounding guard: never past the last position of positive probability in the final set.
    let last = min(n - 1u, atomicLoad(&last_positive));
    let pick = min(atomicLoad(&pick_at), last);
    let token = ids[pick];
    tokens[row] = token;
    let x = max((logits[base + token] - lmax) / temperature, MIN_EXPONENT);
    logprobs[row] = x - log(total);
  }
}
