// y (rows, outDim) = x (rows, inDim) · Wᵀ [+ bias] for few rows (decoding: one row per sequence
// of the batch), W (outDim, inDim) stored as f16 pairs. CPU twin: src/ops/nn/linear-f16.ts.
//
// Decoding reads every weight for a handful of rows, so the bound is the bytes of W, not the
// multiply-adds. Each workgroup owns OUTS output features, one per team of LANES threads. A team
// walks its row of W once per block of ROW_BLOCK rows: lane l reads words l, l + LANES, … (one
// 128-byte run per team per step, coalesced), widens each pair with unpack2x16float and
// multiplies it into the block's ROW_BLOCK accumulators. With rows ≤ ROW_BLOCK that is one pass
// over W; a larger batch walks the same row again per block, from cache (the team's row was just
// read). The lanes' partial sums meet in workgroup memory, where lane j of the team adds up row
// j's and writes its output.
// inDim is even (the wrapper checks): a row of W is whole words and a row of x whole vec2s.
// Grid: ⌈outDim / OUTS⌉ workgroups over (x, y) past 65,535.
// y may be a column window of a wider matrix (a weight split by rows into parts, one dispatch
// each): row r of y starts at y[r · y_stride + y_col], and bias is indexed in y's full columns.

const LANES: u32 = 32u;      // threads per output feature
const OUTS: u32 = 8u;        // output features per workgroup
const THREADS: u32 = 256u;   // LANES · OUTS
const MAX_ROW_BLOCK: u32 = 8u;  // accumulators per thread; ≤ LANES
// Rows per pass over W, ≤ MAX_ROW_BLOCK: the wrapper sets min(rows, 8), so a batch of one does
// one multiply-add per weight, not eight guarded ones (a pipeline per value, cached).
override ROW_BLOCK: u32 = 8u;

struct Params {
  rows: u32,
  in_dim: u32,
  out_dim: u32,
  has_bias: u32,  // 1: add bias[y_col + o] to every row
  y_stride: u32,  // elements from one row of y to the next (outDim without a window)
  y_col: u32,     // y's first column
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<vec2f>;       // (rows, inDim / 2)
@group(0) @binding(2) var<storage, read> w: array<u32>;         // (outDim, inDim / 2) f16 pairs
@group(0) @binding(3) var<storage, read> bias: array<f32>;      // (outDim); any buffer if has_bias = 0
@group(0) @binding(4) var<storage, read_write> y: array<f32>;   // (rows, outDim)

// partial[j · THREADS + tid]: thread tid's share of row r0 + j of its team's output.
var<workgroup> partial: array<f32, MAX_ROW_BLOCK * THREADS>;

@compute @workgroup_size(THREADS)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) tid: u32,
) {
  let team = tid / LANES;
  let lane = tid % LANES;
  let o = (wid.x + wid.y * groups.x) * OUTS + team;
  // Teams past outDim (the last workgroup, the grid's spare ones) still take part in the barriers.
  let live = o < params.out_dim;
  let words = params.in_dim / 2u;
  let w_row = o * words;

  for (var r0 = 0u; r0 < params.rows; r0 += ROW_BLOCK) {
    let block = min(ROW_BLOCK, params.rows - r0);
    // Zeroed explicitly each block: a declaration inside a loop is not relied on to re-zero.
    var acc: array<f32, MAX_ROW_BLOCK>;
    for (var j = 0u; j < ROW_BLOCK; j++) {
      acc[j] = 0.0;
    }
    if (live) {
      for (var q = lane; q < words; q += LANES) {
        let pair = unpack2x16float(w[w_row + q]);
        for (var j = 0u; j < ROW_BLOCK; j++) {
          if (j < block) {
            acc[j] += dot(x[(r0 + j) * words + q], pair);
          }
        }
      }
    }
    for (var j = 0u; j < ROW_BLOCK; j++) {
      partial[j * THREADS + tid] = acc[j];
    }
    workgroupBarrier();
    // Lane j sums row j's LANES partials of its team in lane order (one barrier, not a tree's
    // log2(LANES): barriers dominate on software adapters, and 32 reads are cheap on hardware).
    if (live && lane < block) {
      let first = lane * THREADS + team * LANES;
      var v = 0.0;
      for (var l = 0u; l < LANES; l++) {
        v += partial[first + l];
      }
      if (params.has_bias != 0u) {
        v += bias[params.y_col + o];
      }
      y[(r0 + lane) * params.y_stride + params.y_col + o] = v;
    }
    // The next block overwrites partial: every lane must have read its sum.
    workgroupBarrier();
  }
}
