// SwiGLU, the middle of a Llama / Qwen MLP: h = silu(g) ⊙ u, one element per invocation.
// CPU twin: src/ops/nn/swiglu.ts. The gate and up projections are matmuls before it.
//
//   g, u, h: (count)   σ(v) = 1 / (1 + e^(−v)),  silu(v) = v·σ(v)
//
// σ is formed from e^(−|v|), which never overflows: for large |v| WGSL's exp may return inf, and
// inf / inf would be NaN. Invocations spread over a 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> g: array<f32>;          // (count)
@group(0) @binding(2) var<storage, read> u: array<f32>;          // (count)
@group(0) @binding(3) var<storage, read_write> h: array<f32>;    // (count)

fn sigmoid(v: f32) -> f32 {
  let e = exp(-abs(v));
  return select(e / (1.0 + e), 1.0 / (1.0 + e), v >= 0.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    let v = g[i];
    h[i] = v * sigmoid(v) * u[i];
  }
}
