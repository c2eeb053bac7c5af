// Causal multi-head attention, backward part 1: gradients of the scores.
// CPU reference: src/ops/nn/attention.ts (attentionBackward).
//
// Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH.
//   dout: (B, T, C);  qkv: (B, T, 3C);  probs, dscores: (B, NH, T, T)
// One invocation per query row r = (b·NH + h)·T + t, rows spread over (x, y) workgroups:
//   dP[t, u] = dO_t · v_u,   dS[t, u] = P[t, u] · (dP[t, u] − Σ_u' P[t, u'] · dP[t, u'])   (u ≤ t)
// written for the whole row, zeros above the diagonal; the row of dscores holds dP in between.
// dS excludes the 1/√hs of the scores: part 2 (attention_backward_grads.wgsl) applies it.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,     // B · NH · T
  seq: u32,      // T
  heads: u32,    // NH
  channels: u32, // C
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;          // (B, T, C)
@group(0) @binding(2) var<storage, read> qkv: array<f32>;           // (B, T, 3C)
@group(0) @binding(3) var<storage, read> probs: array<f32>;         // (B, NH, T, T)
@group(0) @binding(4) var<storage, read_write> dscores: array<f32>; // (B, NH, T, T)

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
  let C = params.channels;
  let stride = 3u * C;
  let hs = C / params.heads;
  let t = row % T;
  let bh = row / T;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let v_head = b * T * stride + 2u * C + h * hs; // qkv[b, 0, 2C + h·hs]
  let d_o = (b * T + t) * C + h * hs;            // dout[b, t, h·hs]
  let p = row * T;                               // probs/dscores[b, h, t, 0]

  var row_dot = 0.0;
  for (var u = 0u; u <= t; u++) {
    let v = v_head + u * stride;
    var dp = 0.0;
    for (var i = 0u; i < hs; i++) {
      dp += dout[d_o + i] * qkv[v + i];
    }
    dscores[p + u] = dp;
    row_dot += probs[p + u] * dp;
  }
  for (var u = 0u; u <= t; u++) {
    dscores[p + u] = probs[p + u] * (dscores[p + u] - row_dot);
  }
  for (var u = t + 1u; u < T; u++) {
    dscores[p + u] = 0.0;
  }
}
