// Causal grouped-query attention backward, part 2: dk and dv, summed over the G query heads of
// each kv head. CPU twin: src/ops/nn/attention-gqa.ts (gqaAttentionBackward). Runs after
// kernels/nn/attention_gqa_backward_scores.wgsl, which wrote dscores.
//
//   q, dout: (B, T, NH·hs)   probs, dscores: (B, NH, T, S)   dk, dv: (B, S, NKV·hs), S = P + T
//   dk[b, u, j·hs + i] = Σ_{h = jG}^{jG+G−1} Σ_{t ≥ u − P} dscores[b, h, t, u] · q[b, t, h·hs + i]
//   dv[b, u, j·hs + i] = Σ_{h = jG}^{jG+G−1} Σ_{t ≥ u − P} probs[b, h, t, u]   · dout[b, t, h·hs + i]
// One invocation per element n of dk (and the same n of dv), flat index
// n = ((b·S + u)·NKV + j)·hs + i, so lanes next to each other read q and dout rows contiguously.
// Each element is summed in a fixed order by one invocation: deterministic, no atomics.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  count: u32,     // B · S · NKV · hs
  seq: u32,       // T
  past: u32,      // P
  heads: u32,     // NH
  kv_heads: u32,  // NKV
  head_size: u32, // hs
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;        // (B, T, NH·hs)
@group(0) @binding(2) var<storage, read> dout: array<f32>;     // (B, T, NH·hs)
@group(0) @binding(3) var<storage, read> probs: array<f32>;    // (B, NH, T, S)
@group(0) @binding(4) var<storage, read> dscores: array<f32>;  // (B, NH, T, S)
@group(0) @binding(5) var<storage, read_write> dk: array<f32>; // (B, S, NKV·hs)
@group(0) @binding(6) var<storage, read_write> dv: array<f32>; // (B, S, NKV·hs)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (n >= params.count) {
    return;
  }
  let T = params.seq;
  let P = params.past;
  let S = P + T;
  let hs = params.head_size;
  let i = n % hs;
  let j = (n / hs) % params.kv_heads;
  let bu = n / (hs * params.kv_heads);
  let u = bu % S;
  let b = bu / S;
  let group = params.heads / params.kv_heads;
  let q_width = params.heads * hs;
  // Query t sees key u when P + t ≥ u.
  let first_t = select(0u, u - P, u > P);

  var dk_acc = 0.0;
  var dv_acc = 0.0;
  for (var g = 0u; g < group; g++) {
    let h = j * group + g;
    let scores = (b * params.heads + h) * T * S + u; // [b, h, t = 0, u]
    for (var t = first_t; t < T; t++) {
      let at = scores + t * S;
      let qo = (b * T + t) * q_width + h * hs + i;
      dk_acc += dscores[at] * q[qo];
      dv_acc += probs[at] * dout[qo];
    }
  }
  dk[n] = dk_acc;
  dv[n] = dv_acc;
}
