// Tiled product with a weight stored as f16 pairs: out (m, n) = A · op(W) [+ bias] [+ out].
// CPU twin: src/ops/nn/linear-f16.ts.
//
//   forward (TRANS_W):  y (rows, outDim) = x (rows, inDim) · Wᵀ     m = rows, k = inDim, n = outDim
//   dx (not TRANS_W):   dx (rows, inDim) = dy (rows, outDim) · W    m = rows, k = outDim, n = inDim
//
// W is (outDim, inDim) row-major, two halves per u32 (the lower index in the low 16 bits), read
// with unpack2x16float: no `shader-f16` feature is needed. inDim is even (the wrapper checks), so
// every row of W starts on a word and every word holds two neighbours of one row.
//
// The tiling is matmul.wgsl's: one 16 × 16-thread workgroup per 64 × 64 output tile, each thread a
// 4 × 4 register block (rows ty + 16·R, columns 4·tx … 4·tx + 3), the inner dimension walked in
// steps of 16 through (16 × 64) slices of A and of op(W) in workgroup memory. Only the W loads
// differ: each thread fetches two u32 words (four halves) per slice and widens them into the f32
// tile, so W crosses memory at half the bytes of an f32 weight. f32 accumulation.
// Grid: (⌈n / 64⌉, ⌈m / 64⌉) workgroups.
//
// A and out may be column windows of wider row-major matrices, as in matmul.wgsl: A's row i starts
// at a[i · a_stride + a_col], out's at out[i · out_stride + out_col], bias is indexed in out's full
// columns. A weight split by rows into parts (a large vocabulary) is one dispatch per part: the
// forward writes the part's columns of y, the input gradient reads the part's columns of dy.

// W used transposed (the forward) or as stored (the input gradient).
override TRANS_W: bool = true;

const TILE: u32 = 64u;    // output rows and columns per workgroup
const TILE_K: u32 = 16u;  // inner-dimension step
const THREADS: u32 = 256u;

struct Params {
  m: u32,
  k: u32,
  n: u32,
  has_bias: u32,    // 1: add bias[col] to every row
  accumulate: u32,  // 1: out = out + result
  a_stride: u32,    // elements from one row of A to the next (k without a window)
  a_col: u32,       // A's first column
  out_stride: u32,  // elements from one row of out to the next (n without a window)
  out_col: u32,     // out's first column
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;          // (m, k)
@group(0) @binding(2) var<storage, read> w: array<u32>;          // (outDim · inDim / 2) f16 pairs
@group(0) @binding(3) var<storage, read> bias: array<f32>;       // (n); any buffer when has_bias = 0
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (m, n)

// tile_a[p · TILE + i] = A[row0 + i, k0 + p]; tile_w[p · TILE + j] = op(W)[k0 + p, col0 + j].
var<workgroup> tile_a: array<f32, TILE_K * TILE>;
var<workgroup> tile_w: array<f32, TILE_K * TILE>;

fn load_a(i: u32, p: u32) -> f32 {
  if (i >= params.m || p >= params.k) {
    return 0.0;
  }
  return a[i * params.a_stride + params.a_col + p];
}

// Stages word `e` (0 … 511) of the W slice at inner offset k0, column offset col0, as two f32.
fn stage_w(e: u32, k0: u32, col0: u32) {
  if (TRANS_W) {
    // op(W)[p, j] = W[j, p], W stored (n, k): a column j of the tile is a run of 16 halves of
    // row col0 + j, i.e. 8 words. Word e covers p = 2·(e % 8) and p + 1 of column e / 8; eight
    // consecutive threads read one row's 32 contiguous bytes.
    let j = e / 8u;
    let p = 2u * (e % 8u);
    var pair = vec2f(0.0);
    // k is even, so p < k implies p + 1 < k: a word is all in or all out.
    if (col0 + j < params.n && k0 + p < params.k) {
      pair = unpack2x16float(w[((col0 + j) * params.k + k0 + p) / 2u]);
    }
    tile_w[p * TILE + j] = pair.x;
    tile_w[(p + 1u) * TILE + j] = pair.y;
  } else {
    // op(W)[p, j] = W[p, j], W stored (k, n): a row p of the tile is 64 halves (32 words) of row
    // k0 + p. Word e covers j = 2·(e % 32) and j + 1; 32 consecutive threads read 128 bytes.
    let p = e / 32u;
    let j = 2u * (e % 32u);
    var pair = vec2f(0.0);
    // n (= inDim) is even and col0 + j is even, so col0 + j < n implies col0 + j + 1 < n.
    if (k0 + p < params.k && col0 + j < params.n) {
      pair = unpack2x16float(w[((k0 + p) * params.n + col0 + j) / 2u]);
    }
    tile_w[p * TILE + j] = pair.x;
    tile_w[p * TILE + j + 1u] = pair.y;
  }
}

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) tid: u32,
) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  let cb = lid.x * 4u;

  let k_tiles = (params.k + TILE_K - 1u) / TILE_K;
  for (var t = 0u; t < k_tiles; t++) {
    let k0 = t * TILE_K;
    // A: 1024 f32, 4 per thread, consecutive threads along k. W: 512 words, 2 per thread.
    for (var l = 0u; l < 4u; l++) {
      let e = tid + l * THREADS;
      let ai = e / TILE_K;
      let ap = e % TILE_K;
      tile_a[ap * TILE + ai] = load_a(row0 + ai, k0 + ap);
    }
    stage_w(tid, k0, col0);
    stage_w(tid + THREADS, k0, col0);
    workgroupBarrier();
    for (var p = 0u; p < TILE_K; p++) {
      let base = p * TILE;
      let wv = vec4f(
        tile_w[base + cb],
        tile_w[base + cb + 1u],
        tile_w[base + cb + 2u],
        tile_w[base + cb + 3u],
      );
      acc0 += tile_a[base + lid.y] * wv;
      acc1 += tile_a[base + lid.y + 16u] * wv;
      acc2 += tile_a[base + lid.y + 32u] * wv;
      acc3 += tile_a[base + lid.y + 48u] * wv;
    }
    // The next iteration overwrites the tiles: every thread must be done reading them.
    workgroupBarrier();
  }
  store_row(row0 + lid.y, col0 + cb, acc0);
  store_row(row0 + lid.y + 16u, col0 + cb, acc1);
  store_row(row0 + lid.y + 32u, col0 + cb, acc2);
  store_row(row0 + lid.y + 48u, col0 + cb, acc3);
}

// Writes out[row, col … col + 3] = v (+ bias) (+ old out), skipping what lies outside (m, n).
fn store_row(row: u32, col: u32, v: vec4f) {
  if (row >= params.m) {
    return;
  }
  for (var c = 0u; c < 4u; c++) {
    if (col + c < params.n) {
      var x = v[c];
      if (params.has_bias != 0u) {
        x += bias[params.out_col + col + c];
      }
      let index = row * params.out_stride + params.out_col + col + c;
      if (params.accumulate != 0u) {
        x = out[index] + x;
      }
      out[index] = x;
    }
  }
}
