// Token + position embedding: x[b, t, c] = wte[tokens[b, t], c] + wpe[pos_offset + t, c], or the
// token row alone when has_wpe is 0 (rotary positions: the wrapper binds wte in wpe's slot).
// CPU reference: src/ops/nn/embedding.ts (embeddingForward).
//
// One invocation per output element, grid spread over (x, y). Token ids are not checked here (the
// wrapper's convenience path checks them on the CPU); an id ≥ vocab — or a negative Int32 id, which
// reads as a huge u32 — never indexes wte: its token row counts as zeros, so x = wpe row.
//
// wte may be one part of a table split by rows (a vocabulary larger than one binding): the part
// holds rows row_start … row_start + part_rows − 1 and writes only the tokens it holds (an id ≥
// vocab is written by every part alike). Unsplit: row_start = 0, part_rows = vocab.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,       // B·T·C
  seq: u32,         // T
  channels: u32,    // C
  vocab: u32,       // V
  pos_offset: u32,  // first position row; pos_offset + T ≤ maxSeq
  has_wpe: u32,     // 0: no position term
  row_start: u32,   // first row of the table this part holds
  part_rows: u32,   // rows this part holds
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;    // (B, T)
@group(0) @binding(2) var<storage, read> wte: array<f32>;       // (part_rows, C)
@group(0) @binding(3) var<storage, read> wpe: array<f32>;       // (maxSeq, C)
@group(0) @binding(4) var<storage, read_write> x: array<f32>;   // (B, T, C)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i >= params.count) {
    return;
  }
  let n = i / params.channels;  // b·T + t
  let c = i % params.channels;
  let t = n % params.seq;
  let token = tokens[n];
  var token_value = 0.0;
  // token − row_start wraps past part_rows for ids below the part: one comparison holds both ends.
  let local = token - params.row_start;
  if (local < params.part_rows) {
    token_value = wte[local * params.channels + c];
  } else if (token < params.vocab) {
    return;
  }
  var position_value = 0.0;
  if (params.has_wpe != 0u) {
    position_value = wpe[(params.pos_offset + t) * params.channels + c];
  }
  x[i] = token_value + position_value;
}
