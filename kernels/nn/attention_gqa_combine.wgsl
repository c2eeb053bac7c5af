// Causal grouped-query attention, forward, split over key chunks: merges the chunks' partials that
// attention_gqa_forward.wgsl wrote with SPLIT. CPU twin: src/ops/nn/attention-gqa.ts
// (gqaAttentionForward; the split changes only the order of the softmax's sums).
//
//   partials: (B·NH·T, chunks, hs), Σ_u exp(s_u − m_c)·v_u over the keys u of chunk c
//   stats:    (B·NH·T, chunks, 2), [m_c, l_c = Σ_u exp(s_u − m_c)]; m_c = −FLT_MAX, l_c = 0 and a
//             zero partial for a chunk with none of the row's keys
//   out:      (B, T, NH·hs);  M = max_c m_c,  out = Σ_c exp(m_c − M)·partial_c / Σ_c exp(m_c − M)·l_c
// One invocation per element of out, flat index n = ((b·T + t)·NH + h)·hs + i; a fixed order over
// the chunks.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,     // B · T · NH · hs
  seq: u32,       // T
  heads: u32,     // NH
  head_size: u32, // hs
  chunks: u32,    // key chunks per row
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partials: array<f32>; // (B·NH·T, chunks, hs)
@group(0) @binding(2) var<storage, read> stats: array<f32>;    // (B·NH·T, chunks, 2)
@group(0) @binding(3) var<storage, read_write> out: array<f32>; // (B, T, NH·hs)

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
  let hs = params.head_size;
  let T = params.seq;
  let i = n % hs;
  let bth = n / hs;
  let h = bth % params.heads;
  let bt = bth / params.heads;
  let row = ((bt / T) * params.heads + h) * T + bt % T; // (b·NH + h)·T + t
  let first = row * params.chunks;

  var m = stats[first * 2u];
  for (var c = 1u; c < params.chunks; c++) {
    m = max(m, stats[(first + c) * 2u]);
  }
  var l_sum = 0.0;
  var acc = 0.0;
  for (var c = 0u; c < params.chunks; c++) {
    let weight = exp(stats[(first + c) * 2u] - m);
    l_sum += weight * stats[(first + c) * 2u + 1u];
    acc += weight * partials[(first + c) * hs + i];
  }
  out[n] = acc / l_sum;
}
