// Column sums: out[c] = Σ_r x[r, c] [+ out[c]], x: (rows, cols) row-major. Bias gradients
// (db = Σ_rows dy). CPU twin: columnSums() in src/ops/nn/matmul.ts.
//
// Deterministic, no atomics: one workgroup of 32 × 8 threads per 32-column chunk. Thread (cx, ly)
// sums rows ly, ly + 8, ly + 16, … of column chunk·32 + cx (a row of the chunk is 32 adjacent
// words, read by 32 adjacent threads); the 8 lane partials of each column are then added in a
// fixed tree. f32 accumulation. cols ≤ 2^20 keeps the grid at ≤ 32,768 workgroups (one dimension).

const COLS: u32 = 32u;  // columns per workgroup
const LANES: u32 = 8u;  // row lanes per column

struct Params {
  rows: u32,
  cols: u32,
  accumulate: u32,  // 1: out[c] = out[c] + Σ
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (rows, cols)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (cols)

var<workgroup> partial: array<f32, COLS * LANES>; // partial[lane · COLS + cx]

@compute @workgroup_size(COLS, LANES)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
) {
  let col = wid.x * COLS + lid.x;
  var sum = 0.0;
  if (col < params.cols) {
    for (var r = lid.y; r < params.rows; r += LANES) {
      sum += x[r * params.cols + col];
    }
  }
  partial[lid.y * COLS + lid.x] = sum;
  // Every thread reaches every barrier (no early return): uniform control flow.
  for (var stride = LANES / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid.y < stride) {
      partial[lid.y * COLS + lid.x] += partial[(lid.y + stride) * COLS + lid.x];
    }
  }
  if (lid.y == 0u && col < params.cols) {
    var v = partial[lid.x];
    if (params.accumulate != 0u) {
      v = out[col] + v;
    }
    out[col] = v;
  }
}
