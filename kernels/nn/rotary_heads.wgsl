// Rotary positions (rotate_half) on a tensor of heads, one position per row; forward, or with
// direction −1 the backward (rotation by −angle). CPU twin: src/ops/nn/rotary-heads.ts.
//
//   x, out: (rows, H·hs)   positions: (rows) u32   cos_table, sin_table: (table_positions, half)
//   for every head and i < half = hs / 2, with p = positions[row], c = cos[p, i], s = sin[p, i]:
//   out[i] = x[i]·c − x[i + half]·direction·s,   out[i + half] = x[i + half]·c + x[i]·direction·s
// One invocation per (row, head, i): it reads its pair before writing the same pair, and no other
// invocation touches that pair. WebGPU rejects overlapping bindings in one dispatch when one of
// them is writable, so in place (IN_PLACE) the tensor is bound once, as out, and the kernel
// reads it from there; x is then a placeholder that is never read. A position past the table
// writes NaN into its pair (visible, and no read outside the table); the convenience path rejects
// such positions before any dispatch.

override WORKGROUP_SIZE: u32 = 256u;
// true: rotate out in place (x unused); false: read x, write out.
override IN_PLACE: bool = false;

struct Params {
  count: u32,           // rows · H · half
  heads: u32,           // H
  half: u32,            // hs / 2
  table_positions: u32, // rows of the cos/sin table
  direction: f32,       // +1 forward, −1 backward
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;         // (rows, H·hs)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (rows, H·hs)
@group(0) @binding(3) var<storage, read> positions: array<u32>; // (rows)
@group(0) @binding(4) var<storage, read> cos_table: array<f32>; // (table_positions, half)
@group(0) @binding(5) var<storage, read> sin_table: array<f32>; // (table_positions, half)

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
  let half = params.half;
  let i = n % half;
  let row_head = n / half; // row·H + h
  let row = row_head / params.heads;
  let lo = row_head * 2u * half + i;
  var a: f32;
  var b: f32;
  if (IN_PLACE) {
    a = out[lo];
    b = out[lo + half];
  } else {
    a = x[lo];
    b = x[lo + half];
  }
  let p = positions[row];
  if (p >= params.table_positions) {
    // A quiet NaN for any p; built from p because WGSL rejects a NaN constant.
    let nan = bitcast<f32>(0x7fc00000u | (p & 1u));
    out[lo] = nan;
    out[lo + half] = nan;
    return;
  }
  let c = cos_table[p * half + i];
  let s = params.direction * sin_table[p * half + i];
  out[lo] = a * c - b * s;
  out[lo + half] = b * c + a * s;
}
