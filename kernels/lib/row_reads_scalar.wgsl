// Row reads for one-workgroup-per-row kernels, from an array<f32>: any row length. A wrapper
// prepends this file or row_reads_vec4.wgsl (same functions; see src/gpu/wgsl-lib.ts); the kernel
// declares
//   WORKGROUP_SIZE (a pipeline-overridable constant)
//   @group(0) @binding(1) var<storage, read> logits: array<RowElement>;   // (rows, cols)
// A trip of QUADS_PER_TRIP · 4 · WORKGROUP_SIZE columns starts at `start`; thread `lid` reads
// quad k = 0, 1, … of it with read_quad(start, k, lid). Over all threads and quads a trip covers
// each of its columns once. Here quad k of thread lid is the columns
//   start + lid + (4k + c) · WORKGROUP_SIZE,  c = 0..3,
// so each load instruction of a warp reads one contiguous run of floats.

alias RowElement = f32;

fn read_logit(i: u32) -> f32 {
  return logits[i];
}

fn read_quad(start: u32, k: u32, lid: u32) -> vec4f {
  let w = WORKGROUP_SIZE;
  let i = start + lid + 4u * k * w;
  return vec4f(logits[i], logits[i + w], logits[i + 2u * w], logits[i + 3u * w]);
}
