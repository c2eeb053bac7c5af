// Tiled matrix product: out (m, n) = op(A) · op(B) [+ bias] [+ out]. CPU twin: src/ops/nn/matmul.ts.
//
// op(A) is (m, k): A stored (m, k), or (k, m) when TRANS_A. op(B) is (k, n): B stored (k, n), or
// (n, k) when TRANS_B. Row-major everywhere.
//
// One workgroup of 16 × 16 threads computes a 64 × 64 output tile; thread (tx, ty) owns a 4 × 4
// register block: rows ty, ty + 16, ty + 32, ty + 48 and the 4 adjacent columns 4·tx … 4·tx + 3,
// held as four vec4 accumulators (one per row). On SwiftShader this ran ~3× faster than a
// 16-element array accumulator and ~4× faster than one output per thread. The inner dimension is
// walked in steps of 16: the workgroup stages a (16 × 64) slice of op(A) and of op(B) in workgroup
// memory (2 × 4 KiB), then every thread does 16 × 16 multiply-adds from it. Loads outside the
// matrix read 0, so any m, k, n ≥ 1 works; writes outside are skipped. f32 accumulation.
// Grid: (⌈n / 64⌉, ⌈m / 64⌉) workgroups; m, n ≤ 2^20 keeps both ≤ 16384.
//
// A and out may be column windows of wider row-major matrices: stored A's row r starts at
// a[r · a_stride + a_col], out's row i at out[i · out_stride + out_col], and bias is indexed in
// out's full columns (bias[out_col + j]). A weight split by output rows into parts (the vocabulary
// of a large LM head) is then one dispatch per part, each writing its own columns of the logits.
// Without a window: a_stride = stored A's width, a_col = 0, out_stride = n, out_col = 0.

// A and B stored transposed; the wrapper builds one pipeline per combination.
override TRANS_A: bool = false;
override TRANS_B: bool = false;

const TILE: u32 = 64u;    // output rows and columns per workgroup
const TILE_K: u32 = 16u;  // inner-dimension step
const THREADS: u32 = 256u;

struct Params {
  m: u32,
  k: u32,
  n: u32,
  has_bias: u32,    // 1: add bias[col] to every row
  accumulate: u32,  // 1: out = out + result
  a_stride: u32,    // elements from one stored row of A to the next
  a_col: u32,       // stored A's first column
  out_stride: u32,  // elements from one row of out to the next
  out_col: u32,     // out's first column
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;          // (m, k), or (k, m) if TRANS_A
@group(0) @binding(2) var<storage, read> b: array<f32>;          // (k, n), or (n, k) if TRANS_B
@group(0) @binding(3) var<storage, read> bias: array<f32>;       // (n); any buffer when has_bias = 0
@group(0) @binding(4) var<storage, read_write> out: array<f32>;  // (m, n)

// Staged slices, inner index first: tile_a[p · TILE + i] = op(A)[row0 + i, k0 + p],
// tile_b[p · TILE + j] = op(B)[k0 + p, col0 + j].
var<workgroup> tile_a: array<f32, TILE_K * TILE>;
var<workgroup> tile_b: array<f32, TILE_K * TILE>;

// op(A)[i, p], or 0 outside the matrix.
fn load_a(i: u32, p: u32) -> f32 {
  if (i >= params.m || p >= params.k) {
    return 0.0;
  }
  if (TRANS_A) {
    return a[p * params.a_stride + params.a_col + i];
  }
  return a[i * params.a_stride + params.a_col + p];
}

// op(B)[p, j], or 0 outside the matrix.
fn load_b(p: u32, j: u32) -> f32 {
  if (p >= params.k || j >= params.n) {
    return 0.0;
  }
  if (TRANS_B) {
    return b[j * params.k + p];
  }
  return b[p * params.n + j];
}

@compute @workgroup_size(16, 16)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(local_invocation_id) lid: vec3u,
  @builtin(local_invocation_index) tid: u32,
) {
  let row0 = wid.y * TILE;
  let col0 = wid.x * TILE;
  // accR = out[row0 + lid.y + 16·R, col0 + cb … cb + 3] before bias / accumulate.
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  let cb = lid.x * 4u;

  let k_tiles = (params.k + TILE_K - 1u) / TILE_K;
  for (var t = 0u; t < k_tiles; t++) {
    let k0 = t * TILE_K;
    // 1024 elements per slice, 4 per thread. Consecutive threads walk the stored matrix's
    // contiguous dimension: along k for a plain A or a transposed B, along m / n otherwise.
    for (var l = 0u; l < 4u; l++) {
      let e = tid + l * THREADS;
      var ai = e / TILE_K;
      var ap = e % TILE_K;
      if (TRANS_A) {
        ai = e % TILE;
        ap = e / TILE;
      }
      tile_a[ap * TILE + ai] = load_a(row0 + ai, k0 + ap);
      var bj = e % TILE;
      var bp = e / TILE;
      if (TRANS_B) {
        bj = e / TILE_K;
        bp = e % TILE_K;
      }
      tile_b[bp * TILE + bj] = load_b(k0 + bp, col0 + bj);
    }
    workgroupBarrier();
    for (var p = 0u; p < TILE_K; p++) {
      let base = p * TILE;
      // op(B)[k0 + p, col0 + cb … + 3] times op(A)[row, k0 + p] for the thread's four rows.
      let bv = vec4f(
        tile_b[base + cb],
        tile_b[base + cb + 1u],
        tile_b[base + cb + 2u],
        tile_b[base + cb + 3u],
      );
      acc0 += tile_a[base + lid.y] * bv;
      acc1 += tile_a[base + lid.y + 16u] * bv;
      acc2 += tile_a[base + lid.y + 32u] * bv;
      acc3 += tile_a[base + lid.y + 48u] * bv;
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
