// Token embedding from f16 storage: x[n, c] = wte[tokens[n], c], wte stored as f16 pairs in u32
// words and widened here (unpack2x16float: no `shader-f16` feature needed). The Llama family has
// no position table (rotary positions act on q and k). CPU twin: unpackF16 then embeddingForward
// (src/ops/nn/unpack-f16.ts, src/ops/nn/embedding.ts) with no wpe.
//
//   tokens: (N) u32 ids   wte: (⌈V·C / 2⌉) u32, row-major (V, C) halves   x: (N, C) f32
//
// One invocation per output pair (C is even, so a pair never straddles two token rows), grid
// spread over (x, y). An id ≥ vocab (or a negative i32 id, a huge u32) gives a zero row, as the
// f32 kernel does: the kernel never reads out of bounds.
//
// wte may be one part of a table split by rows (a vocabulary larger than one binding): the part
// holds rows row_start … row_start + part_rows − 1, writes the pairs of the tokens it holds, and
// leaves the others to their parts (an id ≥ vocab is written as zeros by every part alike).
// Unsplit: row_start = 0, part_rows = vocab.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  pairs: u32,     // N·C / 2
  channels: u32,  // C, even
  vocab: u32,     // V
  row_start: u32, // first row of the table this part holds
  part_rows: u32, // rows this part holds
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> tokens: array<u32>;    // (N)
@group(0) @binding(2) var<storage, read> wte: array<u32>;       // (part_rows·C / 2)
@group(0) @binding(3) var<storage, read_write> x: array<f32>;   // (N, C)

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let pair = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (pair >= params.pairs) {
    return;
  }
  let half_width = params.channels / 2u;
  let n = pair / half_width;
  let c2 = pair % half_width;
  let token = tokens[n];
  var value = vec2f(0.0, 0.0);
  // token − row_start wraps past part_rows for ids below the part: one comparison holds both ends.
  let local = token - params.row_start;
  if (local < params.part_rows) {
    value = unpack2x16float(wte[local * half_width + c2]);
  } else if (token < params.vocab) {
    return;
  }
  x[2u * pair] = value.x;
  x[2u * pair + 1u] = value.y;
}
