// Causal grouped-query attention (GQA), forward, with P past keys (a KV cache).
// CPU twin: src/ops/nn/attention-gqa.ts (gqaAttentionForward).
//
// Shapes: B = batch, T = queries per sequence, P = past, S = P + T keys, NH = heads,
// NKV = kv_heads, G = NH / NKV, hs = head_size, Smax = kv_capacity ≥ S (rows per sequence in k, v).
//   q, out: (B, T, NH·hs)   query head h reads kv head j = ⌊h / G⌋
//   k, v:   (B, Smax, NKV·hs), rows 0 … S − 1 read; a KV cache keeps its capacity Smax, so the
//           buffers need no reallocation as the context grows
//   probs:  (B, NH, T, S), zero after each row's last key (written only when WRITE_PROBS)
// Query row r = (b·NH + h)·T + t (the row index of probs) sits at position P + t and reads keys
// u ≤ P + t. With per_sequence = 1 each sequence has its own past P_b = pasts[b] ≤ P (prompts of
// different lengths decoding in one batch): its rows read keys u ≤ P_b + t, and `past` is the
// largest P_b, which bounds the loops and sets S.
//
// LANES threads share a row; a workgroup holds WORKGROUP_SIZE / LANES rows. Keys go by in tiles
// of LANES·KEYS_PER_LANE: lane l scores keys base + l + LANES·j (j < KEYS_PER_LANE; a full dot
// product over hs each, into a private array), the lanes' maxima and then the keys' weights
// exp(s − m) pass through workgroup memory, and every lane updates its own channels
// i ≡ l (mod LANES) of out with the online softmax: running max m (the same in every lane of a
// row), per-lane running sums of the weights, earlier terms rescaled by exp(m_old − m_new). out
// is the accumulator (read and written once per tile), so there is no scratch as long as S and no
// private array sized by hs; probs is optional. With LANES = 1 (software adapters: barriers are
// context switches there) a row is one invocation and there are no barriers. probs holds the raw
// scores until the end, then exp(s − m) / l_sum.
//
// SPLIT (a decoding step with few rows and many keys: B·NH rows cannot fill a GPU): the keys are
// cut into `chunks` ranges of chunk_keys, one workgroup per (row group, chunk), and each chunk
// leaves its unnormalised partial in out, reshaped (B·NH·T, chunks, hs), and its running max and
// sum in probs, reshaped (B·NH·T, chunks, 2); kernels/nn/attention_gqa_combine.wgsl merges them.
// Without SPLIT, chunks = 1 and chunk_keys ≥ S.

override WORKGROUP_SIZE: u32 = 64u;
// Threads per row: a power of two dividing WORKGROUP_SIZE.
override LANES: u32 = 1u;
override ROWS_PER_GROUP: u32 = WORKGROUP_SIZE / LANES;
// false: probs is not touched (decoding, or a forward that will not be differentiated).
override WRITE_PROBS: bool = true;
// true: write partials per key chunk (see above); never with WRITE_PROBS.
override SPLIT: bool = false;
// Keys each lane scores per tile (a private array's size, so a const).
const KEYS_PER_LANE: u32 = 8u;

struct Params {
  rows: u32,        // B · NH · T
  seq: u32,         // T
  past: u32,        // P
  heads: u32,       // NH
  kv_heads: u32,    // NKV
  head_size: u32,   // hs
  kv_capacity: u32, // Smax
  chunks: u32,      // key chunks per row (1 without SPLIT)
  chunk_keys: u32,  // keys per chunk
  scale: f32,       // 1 / √hs
  per_sequence: u32, // 1: sequence b's past is pasts[b] (≤ past)
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;           // (B, T, NH·hs)
@group(0) @binding(2) var<storage, read> k: array<f32>;           // (B, Smax, NKV·hs)
@group(0) @binding(3) var<storage, read> v: array<f32>;           // (B, Smax, NKV·hs)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;   // (B, T, NH·hs); SPLIT: partials
@group(0) @binding(5) var<storage, read_write> probs: array<f32>; // (B, NH, T, S); SPLIT: max, sum
@group(0) @binding(6) var<storage, read> pasts: array<u32>;       // (B), read if per_sequence

// Per thread: its keys' max in the tile, then (after the loop) its running sum.
var<workgroup> lane_values: array<f32, WORKGROUP_SIZE>;
// Per row: the weights of the tile's LANES·KEYS_PER_LANE keys, in key order.
var<workgroup> tile_weights: array<f32, WORKGROUP_SIZE * KEYS_PER_LANE>;

const NEG_MAX: f32 = -3.4028234663852886e38; // −FLT_MAX: exp(NEG_MAX − finite) = 0

fn sync() {
  if (LANES > 1u) {
    workgroupBarrier();
  }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let wg = wid.x + wid.y * groups.x;
  let chunk = wg % params.chunks;
  let first_row = (wg / params.chunks) * ROWS_PER_GROUP;
  // Workgroup-uniform: the whole group returns together, so later barriers stay uniform.
  if (first_row >= params.rows) {
    return;
  }
  let T = params.seq;
  let P = params.past;
  let S = P + T;
  let hs = params.head_size;
  // The tile loop runs to the group's largest last key (uniform), so every lane meets every
  // barrier; rows whose keys end earlier score nothing in the later tiles.
  let last_row = min(first_row + ROWS_PER_GROUP, params.rows) - 1u;
  var group_t = T - 1u;
  if (first_row / T == last_row / T) {
    group_t = last_row % T;
  }
  let group_last = P + group_t;
  let key_start = chunk * params.chunk_keys;
  let group_end = min(group_last + 1u, key_start + params.chunk_keys); // uniform, exclusive

  let slot_row = (lid / LANES) * LANES; // this row's first slot in lane_values
  let tile_keys = LANES * KEYS_PER_LANE;
  let weights_row = slot_row * KEYS_PER_LANE; // this row's first slot in tile_weights
  let lane = lid % LANES;
  let row = first_row + lid / LANES;
  let in_range = row < params.rows;
  let t = row % T;
  let bh = row / T;
  let h = bh % params.heads;
  let b = bh / params.heads;
  // Rows past params.rows read sequence 0's past: they score nothing (in_range is false).
  let last = select(P, pasts[select(0u, b, in_range)], params.per_sequence == 1u) + t;
  let q_width = params.heads * hs;
  let kv_width = params.kv_heads * hs;
  let group = params.heads / params.kv_heads;
  let qo = (b * T + t) * q_width + h * hs;                 // q[b, t, h·hs], out likewise
  let kv0 = b * params.kv_capacity * kv_width + (h / group) * hs; // k[b, 0, j·hs]
  let p = row * S;                                         // probs[b, h, t, 0]
  let channels = select(0u, hs, in_range);
  let row_end = min(last + 1u, key_start + params.chunk_keys); // this row's keys: [key_start, row_end)
  let partial = row * params.chunks + chunk;
  let acc_o = select(qo, partial * hs, SPLIT); // where this row's accumulator lives in out

  for (var i = lane; i < channels; i += LANES) {
    out[acc_o + i] = 0.0;
  }
  var m = NEG_MAX;
  var lane_sum = 0.0;
  var scores: array<f32, KEYS_PER_LANE>;
  for (var base = key_start; base < group_end; base += tile_keys) {
    var local_max = NEG_MAX;
    for (var j = 0u; j < KEYS_PER_LANE; j++) {
      let u = base + lane + LANES * j;
      var s = NEG_MAX;
      if (in_range && u < row_end) {
        let ko = kv0 + u * kv_width;
        var dot = 0.0;
        for (var i = 0u; i < hs; i++) {
          dot += q[qo + i] * k[ko + i];
        }
        s = dot * params.scale;
        if (WRITE_PROBS) {
          probs[p + u] = s;
        }
      }
      scores[j] = s;
      local_max = max(local_max, s);
    }
    lane_values[lid] = local_max;
    sync();
    var tile_max = NEG_MAX;
    for (var j = 0u; j < LANES; j++) {
      tile_max = max(tile_max, lane_values[slot_row + j]);
    }
    let m_new = max(m, tile_max);
    let correction = exp(m - m_new);
    lane_sum *= correction;
    for (var j = 0u; j < KEYS_PER_LANE; j++) {
      let u = base + lane + LANES * j;
      let w = select(0.0, exp(scores[j] - m_new), in_range && u < row_end);
      tile_weights[weights_row + lane + LANES * j] = w;
      lane_sum += w;
    }
    sync();
    let keys = min(tile_keys, select(0u, row_end - min(base, row_end), in_range));
    for (var i = lane; i < channels; i += LANES) {
      var acc = out[acc_o + i] * correction;
      for (var j = 0u; j < keys; j++) {
        acc += tile_weights[weights_row + j] * v[kv0 + (base + j) * kv_width + i];
      }
      out[acc_o + i] = acc;
    }
    m = m_new;
  }

  // l_sum = Σ of the lanes' sums. Every lane has passed the last tile's second barrier, after
  // which no lane reads lane_values, so it can hold the sums now.
  lane_values[lid] = lane_sum;
  sync();
  var l_sum = 0.0;
  for (var j = 0u; j < LANES; j++) {
    l_sum += lane_values[slot_row + j];
  }
  if (SPLIT) {
    // A chunk past this row's last key leaves m = −FLT_MAX, l_sum = 0 and a zero partial.
    if (in_range && lane == 0u) {
      probs[partial * 2u] = m;
      probs[partial * 2u + 1u] = l_sum;
    }
    return;
  }
  let inv_sum = 1.0 / l_sum;
  for (var i = lane; i < channels; i += LANES) {
    out[qo + i] *= inv_sum;
  }
  if (WRITE_PROBS && in_range) {
    // Each lane rewrites the keys it scored itself (u ≡ lane mod LANES): no barrier needed.
    for (var u = lane; u < S; u += LANES) {
      var prob = 0.0;
      if (u <= last) {
        prob = exp(probs[p + u] - m) * inv_sum;
      }
      probs[p + u] = prob;
    }
  }
}
