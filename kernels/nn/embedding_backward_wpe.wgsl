// Position-embedding gradient: dwpe[t, c] = Σ_b dx[b, t, c] for t < T; rows T … maxSeq−1 = 0.
// CPU reference: src/ops/nn/embedding.ts (embeddingBackward). Training uses positions 0 … T−1.
//
// One invocation per element of dwpe, looping over b in order (deterministic), grid over (x, y).

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  batch: u32,     // B
  seq: u32,       // T
  channels: u32,  // C
  count: u32,     // maxSeq·C
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dx: array<f32>;           // (B, T, C)
@group(0) @binding(2) var<storage, read_write> dwpe: array<f32>;   // (maxSeq, C)

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
  let t = i / params.channels;
  let c = i % params.channels;
  var acc = 0.0;
  if (t < params.seq) {
    let row_stride = params.seq * params.channels;
    for (var b = 0u; b < params.batch; b++) {
      acc += dx[b * row_stride + t * params.channels + c];
    }
  }
  dwpe[i] = acc;
}
