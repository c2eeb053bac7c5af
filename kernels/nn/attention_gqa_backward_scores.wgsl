// Causal grouped-query attention backward, part 1: score gradients and dq.
// CPU twin: src/ops/nn/attention-gqa.ts (gqaAttentionBackward). Part 2 (dk, dv) is
// kernels/nn/attention_gqa_backward_kv.wgsl.
//
// Shapes as the forward (attention_gqa_forward.wgsl) with k, v dense: Smax = S = P + T.
//   dout, q, dq: (B, T, NH·hs)   k, v: (B, S, NKV·hs)   probs, dscores: (B, NH, T, S)
// Per query row r = (b·NH + h)·T + t with kv head j = ⌊h / G⌋ and last key P + t:
//   dP[u] = dO_t · v_u,   rowDot = Σ_u P[u]·dP[u]
//   dscores[u] = P[u] · (dP[u] − rowDot) / √hs   (0 after the last key)
//   dq_t = Σ_u dscores[u] · k_u
// One invocation per row, no workgroup memory and no barriers (the house attention's layout); the
// dscores row is the invocation's own scratch: dP first, then dS. Every element of dq and dscores
// is written once, so the result does not depend on scheduling.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,      // B · NH · T
  seq: u32,       // T
  past: u32,      // P
  heads: u32,     // NH
  kv_heads: u32,  // NKV
  head_size: u32, // hs
  scale: f32,     // 1 / √hs
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;          // (B, T, NH·hs)
@group(0) @binding(2) var<storage, read> k: array<f32>;             // (B, S, NKV·hs)
@group(0) @binding(3) var<storage, read> v: array<f32>;             // (B, S, NKV·hs)
@group(0) @binding(4) var<storage, read> probs: array<f32>;         // (B, NH, T, S)
@group(0) @binding(5) var<storage, read_write> dscores: array<f32>; // (B, NH, T, S)
@group(0) @binding(6) var<storage, read_write> dq: array<f32>;      // (B, T, NH·hs)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let row = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (row >= params.rows) {
    return;
  }
  let T = params.seq;
  let S = params.past + T;
  let hs = params.head_size;
  let t = row % T;
  let bh = row / T;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let last = params.past + t;
  let kv_width = params.kv_heads * hs;
  let qo = (b * T + t) * params.heads * hs + h * hs;
  let kv0 = b * S * kv_width + (h / (params.heads / params.kv_heads)) * hs;
  let p = row * S;

  var row_dot = 0.0;
  for (var u = 0u; u <= last; u++) {
    let vo = kv0 + u * kv_width;
    var dp = 0.0;
    for (var i = 0u; i < hs; i++) {
      dp += dout[qo + i] * v[vo + i];
    }
    dscores[p + u] = dp;
    row_dot += probs[p + u] * dp;
  }
  for (var u = 0u; u <= last; u++) {
    dscores[p + u] = probs[p + u] * (dscores[p + u] - row_dot) * params.scale;
  }
  for (var u = last + 1u; u < S; u++) {
    dscores[p + u] = 0.0;
  }
  for (var i = 0u; i < hs; i++) {
    var acc = 0.0;
    for (var u = 0u; u <= last; u++) {
      acc += dscores[p + u] * k[kv0 + u * kv_width + i];
    }
    dq[qo + i] = acc;
  }
}
