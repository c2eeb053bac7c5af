// Rotary position embeddings (RoPE, the Hugging Face rotate_half convention), in place on qkv:
// for q and k of every head at position p = pos_offset + t, and each i < half = hs / 2,
//   x[i]        ← x[i]        · cos[p, i] − x[i + half] · direction · sin[p, i]
//   x[i + half] ← x[i + half] · cos[p, i] + x[i]        · direction · sin[p, i]
// direction +1 is the forward, −1 its transpose (the backward). v is not touched.
// CPU twin: src/ops/nn/rotary.ts (rotaryForward, rotaryBackward).
//
//   qkv: (B·T, 3C) rows [q (C) | k (C) | v (C)], head h at channels h·hs … (h+1)·hs − 1 of a part
//   cos_table, sin_table: (positions, half); pos_offset + T ≤ positions
// One invocation per (row, head, i): it reads both elements of its q pair and of its k pair
// before writing them, and no other invocation touches those four, so in place is safe.
// 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,       // B·T·NH·half
  seq: u32,         // T
  heads: u32,       // NH
  channels: u32,    // C
  half: u32,        // hs / 2
  pos_offset: u32,  // position of t = 0
  direction: f32,   // +1 forward, −1 backward
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read_write> qkv: array<f32>;   // (B·T, 3C)
@group(0) @binding(2) var<storage, read> cos_table: array<f32>;   // (positions, half)
@group(0) @binding(3) var<storage, read> sin_table: array<f32>;   // (positions, half)

fn rotate_pair(lo: u32, c: f32, s: f32) {
  let a = qkv[lo];
  let b = qkv[lo + params.half];
  qkv[lo] = a * c - b * s;
  qkv[lo + params.half] = b * c + a * s;
}

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
  let i = n % params.half;
  let row_head = n / params.half;  // row·NH + h
  let h = row_head % params.heads;
  let row = row_head / params.heads;  // b·T + t
  let angle = (params.pos_offset + row % params.seq) * params.half + i;
  let c = cos_table[angle];
  let s = params.direction * sin_table[angle];
  let q = row * 3u * params.channels + h * 2u * params.half + i;
  rotate_pair(q, c, s);
  rotate_pair(q + params.channels, c, s);
}
