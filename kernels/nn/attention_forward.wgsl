// Causal multi-head attention, forward. CPU reference: src/ops/nn/attention.ts (attentionForward).
//
// Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH.
//   qkv: (B, T, 3C), row (b, t) = [q (C) | k (C) | v (C)], head h at channels h·hs … (h+1)·hs − 1
//   out: (B, T, C);  probs: (B, NH, T, T), zero above the diagonal
// One invocation per query row r = (b·NH + h)·T + t (the row index of probs), rows spread over
// (x, y) workgroups. No workgroup memory and no barriers: measured on SwiftShader, barriers and
// per-workgroup work dominated a workgroup-per-row version (6–12× slower). The row of probs is the
// invocation's own scratch: scores, then exp(s − max), then probabilities.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,     // B · NH · T
  seq: u32,      // T
  heads: u32,    // NH
  channels: u32, // C
  scale: f32,    // 1 / √hs
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> qkv: array<f32>;         // (B, T, 3C)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;   // (B, T, C)
@group(0) @binding(3) var<storage, read_write> probs: array<f32>; // (B, NH, T, T)

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
  let stride = 3u * C; // qkv row stride
  let hs = C / params.heads;
  let t = row % T;
  let bh = row / T;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let head = b * T * stride + h * hs; // qkv[b, 0, h·hs]
  let q = head + t * stride;
  let p = row * T; // probs[b, h, t, 0]

  // Scores s[u] = q·k_u / √hs for u ≤ t, and their max.
  var row_max = bitcast<f32>(0xff7fffffu); // −FLT_MAX
  for (var u = 0u; u <= t; u++) {
    let k = head + u * stride + C;
    var s = 0.0;
    for (var i = 0u; i < hs; i++) {
      s += qkv[q + i] * qkv[k + i];
    }
    s *= params.scale;
    probs[p + u] = s;
    row_max = max(row_max, s);
  }
  var sum = 0.0;
  for (var u = 0u; u <= t; u++) {
    let e = exp(probs[p + u] - row_max);
    probs[p + u] = e;
    sum += e;
  }
  let inv_sum = 1.0 / sum;
  for (var u = 0u; u <= t; u++) {
    probs[p + u] *= inv_sum;
  }
  for (var u = t + 1u; u < T; u++) {
    probs[p + u] = 0.0;
  }

  // out[b, t, h·hs + i] = Σ_u P[t, u] · v_u[i]
  let o = (b * T + t) * C + h * hs;
  for (var i = 0u; i < hs; i++) {
    var acc = 0.0;
    for (var u = 0u; u <= t; u++) {
      acc += probs[p + u] * qkv[head + u * stride + 2u * C + i];
    }
    out[o + i] = acc;
  }
}
