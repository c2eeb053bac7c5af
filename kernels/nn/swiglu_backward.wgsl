// SwiGLU backward: dg = dh ⊙ u ⊙ silu′(g), du = dh ⊙ silu(g), one element per invocation.
// CPU twin: src/ops/nn/swiglu.ts.
//
//   dh, g, u, dg, du: (count)   silu′(v) = σ(v)·(1 + v·(1 − σ(v)))
//
// σ from e^(−|v|) as in swiglu.wgsl. dg and du may be two slices of one buffer (the gate and up
// halves of a fused projection's gradient); they must not overlap.

override WORKGROUP_SIZE: u32 = 256u;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dh: array<f32>;         // (count)
@group(0) @binding(2) var<storage, read> g: array<f32>;          // (count)
@group(0) @binding(3) var<storage, read> u: array<f32>;          // (count)
@group(0) @binding(4) var<storage, read_write> dg: array<f32>;   // (count)
@group(0) @binding(5) var<storage, read_write> du: array<f32>;   // (count)

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
    let s = sigmoid(v);
    dg[i] = dh[i] * u[i] * s * (1.0 + v * (1.0 - s));
    du[i] = dh[i] * v * s;
  }
}
