// One decoding step of causal multi-head attention with a KV cache.
// CPU reference: src/ops/nn/attention-decode.ts (attentionDecode).
//
// Shapes: B = batch, C = channels, NH = heads, hs = C / NH, S = maxSeq; every row at position pos.
//   qkv_step: (B, 3C), row b = [q | k | v] of position pos;  out: (B, C)
//   k_cache, v_cache: (B, NH, S, hs)
// One invocation per (b, h), index bh = b·NH + h, spread over (x, y) workgroups. It writes k and v
// of pos into its own cache region, then attends q over cached positions 0 … pos; it reads only
// what it wrote itself (pos) or earlier dispatches wrote (< pos), so no barrier is needed. The
// scores live in a private array (T ≤ 256).

override WORKGROUP_SIZE: u32 = 64u;

const MAX_SEQ: u32 = 256u;

struct Params {
  groups: u32,   // B · NH
  heads: u32,    // NH
  channels: u32, // C
  max_seq: u32,  // S
  pos: u32,      // position of this step, < S
  scale: f32,    // 1 / √hs
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> qkv_step: array<f32>;      // (B, 3C)
@group(0) @binding(2) var<storage, read_write> k_cache: array<f32>; // (B, NH, S, hs)
@group(0) @binding(3) var<storage, read_write> v_cache: array<f32>; // (B, NH, S, hs)
@group(0) @binding(4) var<storage, read_write> out: array<f32>;     // (B, C)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let bh = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (bh >= params.groups) {
    return;
  }
  let C = params.channels;
  let hs = C / params.heads;
  let h = bh % params.heads;
  let b = bh / params.heads;
  let pos = params.pos;
  let q = b * 3u * C + h * hs;          // qkv_step[b, h·hs]
  let cache = bh * params.max_seq * hs; // k_cache/v_cache[b, h, 0, 0]

  for (var i = 0u; i < hs; i++) {
    k_cache[cache + pos * hs + i] = qkv_step[q + C + i];
    v_cache[cache + pos * hs + i] = qkv_step[q + 2u * C + i];
  }

  var p: array<f32, MAX_SEQ>;
  var row_max = bitcast<f32>(0xff7fffffu); // −FLT_MAX
  for (var u = 0u; u <= pos; u++) {
    var s = 0.0;
    for (var i = 0u; i < hs; i++) {
      s += qkv_step[q + i] * k_cache[cache + u * hs + i];
    }
    s *= params.scale;
    p[u] = s;
    row_max = max(row_max, s);
  }
  var sum = 0.0;
  for (var u = 0u; u <= pos; u++) {
    let e = exp(p[u] - row_max);
    p[u] = e;
    sum += e;
  }
  let inv_sum = 1.0 / sum;
  for (var u = 0u; u <= pos; u++) {
    p[u] *= inv_sum;
  }
  for (var i = 0u; i < hs; i++) {
    var acc = 0.0;
    for (var u = 0u; u <= pos; u++) {
      acc += p[u] * v_cache[cache + u * hs + i];
    }
    out[b * C + h * hs + i] = acc;
  }
}
