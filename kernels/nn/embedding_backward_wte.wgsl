// Token-embedding gradient: dwte[v, c] (+)= Σ over positions n with tokens[n] = v of dx[n, c].
// CPU reference: src/ops/nn/embedding.ts (embeddingBackward).
//
// Deterministic, no atomics: one workgroup per (vocab row v, block of WORKGROUP_SIZE channels),
// flat workgroup index over (x, y). The workgroup walks all B·T token ids in order, a tile of
// WORKGROUP_SIZE ids at a time staged in workgroup memory, and each thread adds the dx entries of
// matching positions for its channel — the same order every run. Every (v, c) is written, so rows
// of tokens that do not occur get 0 (or keep their value when accumulating).
// Ids ≥ vocab (or negative Int32 ids, huge as u32) match no row and are ignored.
// accumulate = 1: dwte += Σ (tied embeddings: the LM head already wrote its part); 0: dwte = Σ.

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  tokens_count: u32,  // B·T
  channels: u32,      // C
  vocab: u32,         // V
  col_blocks: u32,    // ceil(C / WORKGROUP_SIZE)
  accumulate: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dx: array<f32>;           // (B, T, C)
@group(0) @binding(2) var<storage, read> tokens: array<u32>;       // (B, T)
@group(0) @binding(3) var<storage, read_write> dwte: array<f32>;   // (V, C)

var<workgroup> tile: array<u32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let w = wid.x + wid.y * groups.x;
  let v = w / params.col_blocks;
  // Workgroup-uniform: the whole group returns together, so the barriers below stay uniform.
  if (v >= params.vocab) {
    return;
  }
  let c = (w % params.col_blocks) * WORKGROUP_SIZE + lid;
  let in_row = c < params.channels;

  var acc = 0.0;
  for (var start = 0u; start < params.tokens_count; start += WORKGROUP_SIZE) {
    let n = start + lid;
    var id = 0xffffffffu;
    if (n < params.tokens_count) {
      id = tokens[n];
    }
    tile[lid] = id;
    workgroupBarrier();
    let chunk = min(WORKGROUP_SIZE, params.tokens_count - start);
    for (var k = 0u; k < chunk; k++) {
      if (tile[k] == v && in_row) {
        acc += dx[(start + k) * params.channels + c];
      }
    }
    workgroupBarrier();
  }

  if (in_row) {
    let o = v * params.channels + c;
    if (params.accumulate != 0u) {
      dwte[o] = dwte[o] + acc;
    } else {
      dwte[o] = acc;
    }
  }
}
