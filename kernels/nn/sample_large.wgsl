// Seeded token sampling for any vocabulary (V ≤ 2^20) without sorting: temperature → top-k →
// top-p, one token per row. CPU twin (and the exact algorithm): sampleTokensAnyVocab() in
// src/ops/nn/sample.ts. Prepended by the wrapper: kernels/lib/counter_rng.wgsl (counter_uniform).
//
// One workgroup per row, rows spread over (x, y): row = wid.x + wid.y * num_workgroups.x.
// The CPU sorts the row (logit descending, ties by lower index) and cuts prefixes of that order.
// Every prefix of the order ends at one token b, and is the set {i : key_i > key_b, or
// key_i = key_b and i ≤ b}, where key is an order-preserving u32 image of the logit (key_of).
// So each cut-off is found as a "boundary" (t, b) instead of a sort:
//   t = the largest key with W(key ≥ t) reaching the goal (W: a count or a mass of e over the
//       current set), found one 4-bit digit at a time from the top: 8 passes over the row, each
//       summing W per digit value (16 sums per invocation, reduced 4 at a time);
//   b = among the tokens with key = t (ties; all share one logit), in index order, the first at
//       which W(key > t) + W(ties so far) reaches the goal: each thread owns a contiguous chunk
//       of indices, an exclusive scan over the threads gives each chunk its starting sum, and the
//       thread where the sum crosses walks its chunk.
//   1. lmax = the largest logit (argmax, lowest index on ties); T = 0 writes the argmax and
//      log-prob 0;
//   2. top-k: count(key ≥ t) ≥ K (counts as f32, exact below 2^24); a kept set of K ≤ COMPACT_MAX
//      tokens is then copied into workgroup memory in index order, and steps 3–4 walk it;
//   3. top-p: mass(kept, key ≥ t) ≥ top_p · Σ_kept e, e = exp((l − lmax) / T);
//   4. draw: mass(final, key ≥ t) > u · Z, Z = Σ_final e, u = counter_uniform(seed, step, row); if
//      rounding leaves none, the last token of the final set with e > 0;
//   5. logprob = (l_token − lmax) / T − log Z.
// exp and sums in f32 (the CPU's in float64; Z agreed to ≤ 1.5e-5 relative at V = 151,936 on
// SwiftShader): the same token unless u · Z or a top-p cumulative lies within ~1e-5 (relative) of
// a cumulative boundary, which at V ≈ 1e5 is rare (0 of 96 random rows differed).
// Reads of the row: 1 + (8 + 1 + ≤ 1 for the walk) per search (top-k, top-p and the draw each)
// + one sum for Σ_kept e and one for Z (+ 1 in the rounding guard): ≤ 34; with top-k ≤ 512,
// 1 + 10 + 2 (the copy), the rest in workgroup memory. Workgroup memory: 28 · WORKGROUP_SIZE
// bytes + 4 KiB (the top-k copy) + 8 words. Logits may be -inf (a masked token, e = 0); one per
// row must be finite; NaN is not supported.

// Threads per workgroup (and per row); a power of two (the tree reductions halve it).
override WORKGROUP_SIZE: u32 = 256u;
const NONE: u32 = 0xffffffffu;
// key_of(-inf): every key ≤ it is a masked token (weight 0).
const NEG_INF_KEY: u32 = 0x007fffffu;
// Top-k sets up to this size are copied into workgroup memory (index order kept), so that top-p
// and the draw read 4 KiB of workgroup memory instead of the row (most chat settings use top-k
// 20–100).
const COMPACT_MAX: u32 = 512u;
// exp(x) for x < −104 is below f32's smallest subnormal: weight 0 without calling exp.
const MIN_EXPONENT: f32 = -104.0;

struct Params {
  rows: u32,
  vocab: u32,
  kept: u32,         // tokens kept by top-k: min(top_k, vocab), vocab when top-k is off
  seed: u32,
  step: u32,
  temperature: f32,  // > 0, or 0 = greedy
  top_p: f32,        // (0, 1]; 1 = off
  first_row: u32,    // the draw's row index of row 0 (a batch that is part of a larger one)
  has_draw_rows: u32,  // 1: row r draws as row draw_rows[r] (first_row unused)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;          // (rows, vocab)
@group(0) @binding(2) var<storage, read_write> tokens: array<u32>;    // (rows), i32 or u32 ids
@group(0) @binding(3) var<storage, read_write> logprobs: array<f32>;  // (rows)
// (rows) the draw's row index of each row, when has_draw_rows: a batch gathered from anywhere in a
// larger one (prompts of one length, wherever they sit in the list) draws what those rows would.
@group(0) @binding(4) var<storage, read> draw_rows: array<u32>;

var<workgroup> red_f: array<f32, WORKGROUP_SIZE>;  // sums and scans
var<workgroup> red_v: array<vec4f, WORKGROUP_SIZE>;  // the digit searches' 16 sums, 4 at a time
var<workgroup> red_k: array<u32, WORKGROUP_SIZE>;  // (key, index) reductions
var<workgroup> red_i: array<u32, WORKGROUP_SIZE>;
var<workgroup> shared_f: f32;                      // a reduction's result, loaded uniformly
var<workgroup> shared_v: vec4f;
var<workgroup> shared_k: u32;
var<workgroup> shared_i: u32;
var<workgroup> found: atomic<u32>;                 // smallest index where a tie walk crossed
var<workgroup> kept_logit: array<f32, COMPACT_MAX>; // the compacted top-k set, by index
var<workgroup> kept_index: array<u32, COMPACT_MAX>;

// This invocation's row context, set once at the start of main.
var<private> lid: u32;
var<private> base: u32;     // the row's first element in logits
var<private> lmax: f32;
// The elements the passes walk: the row (e = token index, count = vocab) or, once compacted, the
// top-k set in workgroup memory (count = its size), in index order either way.
var<private> compacted: bool;
var<private> count: u32;

// Order-preserving u32 image of an f32: a > b ⇔ key(a) > key(b) for non-NaN a, b. Negative values
// flip every bit, the others set the sign bit; −0 maps to +0's key (the CPU's −0 == +0).
fn key_of(l: f32) -> u32 {
  var bits = bitcast<u32>(l);
  if (bits == 0x80000000u) {
    bits = 0u;
  }
  return select(bits | 0x80000000u, ~bits, (bits & 0x80000000u) != 0u);
}

// e = exp((l − lmax) / T), 0 for masked (−inf) tokens and underflow.
fn weight_of(k: u32, l: f32) -> f32 {
  if (k <= NEG_INF_KEY) {
    return 0.0;
  }
  let x = (l - lmax) / params.temperature;
  if (x < MIN_EXPONENT) {
    return 0.0;
  }
  return exp(x);
}

// Count mode weighs every token 1; mass mode weighs it e.
fn weight(k: u32, l: f32, mass: bool) -> f32 {
  if (!mass) {
    return 1.0;
  }
  return weight_of(k, l);
}

// Is token (k, i) in the prefix of the order that ends at boundary (bt, bi)? (0, NONE): all.
fn in_set(k: u32, i: u32, bt: u32, bi: u32) -> bool {
  return k > bt || (k == bt && i <= bi);
}

// Element e's logit and token index.
fn logit_at(e: u32) -> f32 {
  if (compacted) {
    return kept_logit[e];
  }
  return logits[base + e];
}

fn index_at(e: u32) -> u32 {
  if (compacted) {
    return kept_index[e];
  }
  return e;
}

// Has cumulative weight w reached the goal? Top-k and top-p need ≥, the draw needs >.
fn reached(w: f32, goal: f32, strict: bool) -> bool {
  return select(w >= goal, w > goal, strict);
}

// reached() for 4 sums: 1 where reached, else 0.
fn reached4(w: vec4f, goal: f32, strict: bool) -> vec4u {
  let hit = select(w >= vec4f(goal), w > vec4f(goal), strict);
  return select(vec4u(0u), vec4u(1u), hit);
}

// Σ v over the workgroup (fixed tree: monotone in every v), the same value in every invocation.
fn reduce_sum(v: f32) -> f32 {
  red_f[lid] = v;
  workgroupBarrier();
  for (var s = WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red_f[lid] += red_f[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    shared_f = red_f[0];
  }
  return workgroupUniformLoad(&shared_f);
}

// reduce_sum for 4 sums at once (the same tree for each component).
fn reduce_sum4(v: vec4f) -> vec4f {
  red_v[lid] = v;
  workgroupBarrier();
  for (var s = WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red_v[lid] += red_v[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    shared_v = red_v[0];
  }
  return workgroupUniformLoad(&shared_v);
}

// Exclusive prefix sum of v over invocations 0 .. lid − 1 (Hillis–Steele in red_f).
fn scan_exclusive(v: f32) -> f32 {
  red_f[lid] = v;
  for (var d = 1u; d < WORKGROUP_SIZE; d <<= 1u) {
    workgroupBarrier();
    var add = 0.0;
    if (lid >= d) {
      add = red_f[lid - d];
    }
    workgroupBarrier();
    red_f[lid] += add;
  }
  workgroupBarrier();
  var before = 0.0;
  if (lid > 0u) {
    before = red_f[lid - 1u];
  }
  workgroupBarrier(); // everyone has read red_f before it is reused
  return before;
}

// Does (ka, ia) win over (kb, ib)? first: earlier in the order (larger key, then lower index);
// otherwise later (smaller key, then higher index). NONE marks "no token".
fn wins(ka: u32, ia: u32, kb: u32, ib: u32, first: bool) -> bool {
  if (ia == NONE) {
    return false;
  }
  if (ib == NONE) {
    return true;
  }
  if (first) {
    return ka > kb || (ka == kb && ia < ib);
  }
  return ka < kb || (ka == kb && ia > ib);
}

// The winning (key, index) over the workgroup, the same in every invocation.
fn reduce_order(k: u32, i: u32, first: bool) -> vec2u {
  red_k[lid] = k;
  red_i[lid] = i;
  workgroupBarrier();
  for (var s = WORKGROUP_SIZE / 2u; s > 0u; s >>= 1u) {
    if (lid < s && wins(red_k[lid + s], red_i[lid + s], red_k[lid], red_i[lid], first)) {
      red_k[lid] = red_k[lid + s];
      red_i[lid] = red_i[lid + s];
    }
    workgroupBarrier();
  }
  if (lid == 0u) {
    shared_k = red_k[0];
    shared_i = red_i[0];
  }
  let key = workgroupUniformLoad(&shared_k);
  return vec2u(key, workgroupUniformLoad(&shared_i));
}

// The largest key t with W(set, key ≥ t) reaching the goal, one 4-bit digit per pass from the top
// (8 passes). At digit d, with the digits above it fixed, each invocation sums its tokens' weights
// by the digit's value (strided reads, coalesced) and turns them into suffix sums
// s[v] = W(key ≥ t + v · 2^shift); the workgroup sums each s[v] in a fixed tree (so it stays
// monotone in v), and the digit is the largest v whose sum reaches the goal.
fn search_key(bt: u32, bi: u32, mass: bool, goal: f32, strict: bool) -> u32 {
  var t = 0u;
  for (var d = 0u; d < 8u; d++) {
    let shift = 28u - 4u * d;
    let prefix = (t >> shift) >> 4u; // the digits fixed so far (two shifts: never by 32)
    // Zeroed explicitly: a bare `var bins: array<f32, 16>;` here kept the previous digit's sums on
    // SwiftShader (Dawn in Node), though WGSL zero-initialises it at every iteration.
    var bins = array<f32, 16>();
    var above = 0.0; // tokens whose fixed digits exceed t's: counted for every v
    for (var e = lid; e < count; e += WORKGROUP_SIZE) {
      let l = logit_at(e);
      let i = index_at(e);
      let k = key_of(l);
      let kp = (k >> shift) >> 4u;
      if (kp >= prefix && in_set(k, i, bt, bi)) {
        let w = weight(k, l, mass);
        if (kp > prefix) {
          above += w;
        } else {
          bins[(k >> shift) & 15u] += w;
        }
      }
    }
    var suffix = above;
    for (var j = 0u; j < 16u; j++) {
      suffix += bins[15u - j];
      bins[15u - j] = suffix;
    }
    // Which suffix sums reach the goal: v = 0 … m for a monotone s, so the digit m is how many
    // reach it, minus one.
    let reach0 = reached4(reduce_sum4(vec4f(bins[0], bins[1], bins[2], bins[3])), goal, strict);
    let reach1 = reached4(reduce_sum4(vec4f(bins[4], bins[5], bins[6], bins[7])), goal, strict);
    let reach2 = reached4(reduce_sum4(vec4f(bins[8], bins[9], bins[10], bins[11])), goal, strict);
    let reach3 = reached4(reduce_sum4(vec4f(bins[12], bins[13], bins[14], bins[15])), goal, strict);
    let reaching = dot(reach0 + reach1 + reach2 + reach3, vec4u(1u));
    let digit = max(reaching, 1u) - 1u;
    t |= digit << shift;
  }
  return t;
}

// Σ weight over the tokens of set (bt, bi): its total for the top-p goal and for Z.
fn set_weight(bt: u32, bi: u32, mass: bool) -> f32 {
  var sum = 0.0;
  for (var e = lid; e < count; e += WORKGROUP_SIZE) {
    let l = logit_at(e);
    let i = index_at(e);
    let k = key_of(l);
    if (in_set(k, i, bt, bi)) {
      sum += weight(k, l, mass);
    }
  }
  return reduce_sum(sum);
}

// The first token of set (bt, bi), in the order, at which the cumulative weight reaches `goal`,
// as a boundary (key, index); index NONE when the set's weight `total` does not reach it. See the
// file comment: a digit-by-digit search for the key (search_key), then a walk of the ties at it.
fn find_boundary(bt: u32, bi: u32, mass: bool, total: f32, goal: f32, strict: bool) -> vec2u {
  if (!reached(total, goal, strict)) {
    return vec2u(0u, NONE);
  }
  let t = search_key(bt, bi, mass, goal, strict);
  // Ties at t: this invocation's contiguous chunk [start, end) of elements (so of indices).
  let chunk = (count + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
  let start = min(lid * chunk, count);
  let end = min(start + chunk, count);
  var above = 0.0;  // weight of the set's tokens with key > t in this chunk
  var ties = 0.0;   // weight of the set's ties at t in this chunk
  var last_tie = NONE;
  for (var e = start; e < end; e++) {
    let l = logit_at(e);
    let i = index_at(e);
    let k = key_of(l);
    if (k >= t && in_set(k, i, bt, bi)) {
      let w = weight(k, l, mass);
      if (k > t) {
        above += w;
      } else {
        ties += w;
        last_tie = i;
      }
    }
  }
  if (lid == 0u) {
    atomicStore(&found, NONE);
  }
  var running = reduce_sum(above) + scan_exclusive(ties);
  // Walk the chunk unless the sum had already reached the goal before it (then the crossing is
  // in an earlier chunk). The smallest crossing index wins.
  if (!reached(running, goal, strict)) {
    for (var e = start; e < end; e++) {
      let l = logit_at(e);
      let i = index_at(e);
      let k = key_of(l);
      if (k == t && in_set(k, i, bt, bi)) {
        running += weight(k, l, mass);
        if (reached(running, goal, strict)) {
          atomicMin(&found, i);
          break;
        }
      }
    }
  }
  // Rounding guard: the walk's sums round differently from the search's, so it may end just short
  // of the goal; then the boundary is the last tie (all ties share one logit, hence one weight).
  let last = reduce_order(t, last_tie, false);
  workgroupBarrier();
  if (lid == 0u) {
    shared_i = atomicLoad(&found);
  }
  let crossing = workgroupUniformLoad(&shared_i);
  if (crossing != NONE) {
    return vec2u(t, crossing);
  }
  return last;
}

// Copies the set (bt, bi) = boundary, at most COMPACT_MAX tokens, into kept_logit / kept_index in
// index order (contiguous chunks, offsets from an exclusive scan of the chunks' counts), then
// makes the passes walk it.
fn compact(boundary: vec2u) {
  let chunk = (params.vocab + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
  let start = min(lid * chunk, params.vocab);
  let end = min(start + chunk, params.vocab);
  var mine = 0u;
  for (var i = start; i < end; i++) {
    if (in_set(key_of(logits[base + i]), i, boundary.x, boundary.y)) {
      mine += 1u;
    }
  }
  // Counts ≤ 2^20 are exact in f32.
  var slot = u32(scan_exclusive(f32(mine)));
  let size = u32(reduce_sum(f32(mine)));
  for (var i = start; i < end && slot < COMPACT_MAX; i++) {
    let l = logits[base + i];
    if (in_set(key_of(l), i, boundary.x, boundary.y)) {
      kept_logit[slot] = l;
      kept_index[slot] = i;
      slot += 1u;
    }
  }
  workgroupBarrier();
  compacted = true;
  count = min(size, COMPACT_MAX);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) local: u32,
) {
  let row = wid.x + wid.y * groups.x;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (row >= params.rows) {
    return;
  }
  lid = local;
  base = row * params.vocab;
  let vocab = params.vocab;
  compacted = false;
  count = vocab;

  // 1. The argmax: first in the order (largest key, lowest index).
  var best_k = 0u;
  var best_i = NONE;
  for (var i = lid; i < vocab; i += WORKGROUP_SIZE) {
    let k = key_of(logits[base + i]);
    if (wins(k, i, best_k, best_i, true)) {
      best_k = k;
      best_i = i;
    }
  }
  let argmax = reduce_order(best_k, best_i, true);
  if (params.temperature == 0.0) {
    // Greedy: a point mass, so logprob 0.
    if (lid == 0u) {
      tokens[row] = argmax.y;
      logprobs[row] = 0.0;
    }
    return;
  }
  lmax = logits[base + argmax.y];

  // 2. Top-k: the boundary of the first `kept` tokens; (0, NONE) keeps all.
  var boundary = vec2u(0u, NONE);
  if (params.kept < vocab) {
    boundary = find_boundary(0u, NONE, false, f32(vocab), f32(params.kept), false);
    // (The search always finds the K-th token; NONE would mean "all", too many to copy.)
    if (params.kept <= COMPACT_MAX && boundary.y != NONE) {
      compact(boundary);
    }
  }

  // 3. Top-p: the shortest prefix of the kept tokens with Σ e ≥ top_p · Σ_kept e (all when rounding
  //    never reaches it).
  if (params.top_p < 1.0) {
    let kept_mass = set_weight(boundary.x, boundary.y, true);
    let nucleus = find_boundary(
      boundary.x, boundary.y, true, kept_mass, params.top_p * kept_mass, false);
    if (nucleus.y != NONE) {
      boundary = nucleus;
    }
  }

  // 4. The draw: the first token whose cumulative e exceeds u · Z.
  let z = set_weight(boundary.x, boundary.y, true);
  var draw_row = params.first_row + row;
  if (params.has_draw_rows != 0u) {
    draw_row = draw_rows[row];
  }
  let u = counter_uniform(params.seed, params.step, draw_row);
  var pick = find_boundary(boundary.x, boundary.y, true, z, u * z, true);
  if (pick.y == NONE) {
    // Rounding guard: the last token of the final set with e > 0.
    var last_k = 0u;
    var last_i = NONE;
    for (var e = lid; e < count; e += WORKGROUP_SIZE) {
      let l = logit_at(e);
      let i = index_at(e);
      let k = key_of(l);
      if (in_set(k, i, boundary.x, boundary.y) && weight_of(k, l) > 0.0
          && wins(k, i, last_k, last_i, false)) {
        last_k = k;
        last_i = i;
      }
    }
    pick = reduce_order(last_k, last_i, false);
  }

  // 5. The token and its log-prob under the final distribution.
  if (lid == 0u) {
    let token = pick.y;
    tokens[row] = token;
    logprobs[row] = (logits[base + token] - lmax) / params.temperature - log(z);
  }
}
