// Row reads for one-workgroup-per-row kernels, from an array<vec4f>: 16 bytes per load, for rows
// whose length is a multiple of 4 (so every row and every trip starts on a vec4). The same
// functions and contract as row_reads_scalar.wgsl, which the wrapper uses for other lengths. Here
// quad k of thread lid is the four adjacent columns
//   start + 4 · (k · WORKGROUP_SIZE + lid) + c,  c = 0..3,
// so a warp's load instruction reads one contiguous run of vec4s. `start` must be a multiple of 4.

alias RowElement = vec4f;

fn read_logit(i: u32) -> f32 {
  return logits[i / 4u][i % 4u];
}

fn read_quad(start: u32, k: u32, lid: u32) -> vec4f {
  return logits[start / 4u + k * WORKGROUP_SIZE + lid];
}
