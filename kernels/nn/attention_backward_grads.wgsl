// Causal multi-head attention, backward part 2: dq, dk, dv from the score gradients of part 1.
// CPU reference: src/ops/nn/attention.ts (attentionBackward).
//
// Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH.
//   dout: (B, T, C);  qkv, dqkv: (B, T, 3C);  probs, dscores: (B, NH, T, T)
// One invocation per (b, h, position j), index r = (b·NH + h)·T + j, spread over (x, y)
// workgroups. It owns channels h·hs … (h+1)·hs − 1 of all three parts of dqkv row (b, j), so every
// element is written exactly once (no atomics, no accumulation):
//   dq_j = Σ_{u ≤ j} dS[j, u] · k_u / √hs      (row j of dS)
//   dk_j = Σ_{t ≥ j} dS[t, j] · q_t / √hs      (column j of dS)
//   dv_j = Σ_{t ≥ j} P[t, j] · dO_t            (column j of P)

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,     // B · NH · T
  seq: u32,      // T
  heads: u32,    // NH
  channels: u32, // C
  scale: f32,    // 1 / √hs
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dout: array<f32>;       // (B, T, C)
@group(0) @binding(2) var<storage, read> qkv: array<f32>;        // (B, T, 3C)
@group(0) @binding(3) var<storage, read> probs: array<f32>;      // (B, NH, T, T)
@group(0) @binding(4) var<storage, read> dscores: array<f32>;    // (B, NH, T, T)
@group(0) @binding(5) var<storage, read_write> dqkv: array<f32>; // (B, T, 3C)

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
  let j = row % T;
  let bh = row / T;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let mat = bh * T * T;               // probs/dscores[b, h, 0, 0]
  let head = b * T * stride + h * hs; // qkv[b, 0, h·hs]
  let o_head = b * T * C + h * hs;    // dout[b, 0, h·hs]
  let dst = head + j * stride;        // dqkv[b, j, h·hs]

  for (var i = 0u; i < hs; i++) {
    var dq = 0.0;
    for (var u = 0u; u <= j; u++) {
      dq += dscores[mat + j * T + u] * qkv[head + u * stride + C + i];
    }
    var dk = 0.0;
    var dv = 0.0;
    for (var t = j; t < T; t++) {
      dk += dscores[mat + t * T + j] * qkv[head + t * stride + i];
      dv += probs[mat + t * T + j] * dout[o_head + t * C + i];
    }
    dqkv[dst + i] = dq * params.scale;
    dqkv[dst + C + i] = dk * params.scale;
    dqkv[dst + 2u * C + i] = dv;
  }
}
