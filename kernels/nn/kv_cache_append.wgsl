// Appends new key and value rows to a KV cache in place. CPU twin: src/ops/nn/kv-cache.ts
// (kvCacheAppend).
//
//   k_new, v_new: (B, T, W)   k_cache, v_cache: (B, Smax, W), W = NKV·hs
//   cache[b, P_b + t, c] = new[b, t, c]   for t < T, with P_b + T ≤ Smax
// P_b is `past` for every sequence, or with per_sequence = 1 pasts[b]: prompts of different
// lengths decoding in one batch, each sequence's next row at its own length. One invocation per
// new element, flat index n = (b·T + t)·W + c: contiguous reads and, per row, contiguous writes.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,    // B · T · W
  seq: u32,      // T
  width: u32,    // W
  capacity: u32, // Smax
  past: u32,     // first cache row written (every sequence's unless per_sequence)
  per_sequence: u32, // 1: sequence b's first row is pasts[b]
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> k_new: array<f32>;         // (B, T, W)
@group(0) @binding(2) var<storage, read> v_new: array<f32>;         // (B, T, W)
@group(0) @binding(3) var<storage, read_write> k_cache: array<f32>; // (B, Smax, W)
@group(0) @binding(4) var<storage, read_write> v_cache: array<f32>; // (B, Smax, W)
@group(0) @binding(5) var<storage, read> pasts: array<u32>;         // (B), read if per_sequence

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
  let c = n % params.width;
  let bt = n / params.width;
  let t = bt % params.seq;
  let b = bt / params.seq;
  let past = select(params.past, pasts[b], params.per_sequence == 1u);
  let at = (b * params.capacity + past + t) * params.width + c;
  k_cache[at] = k_new[n];
  v_cache[at] = v_new[n];
}
