// Elementwise activation backward dx = dy · f′(x), from the forward's INPUT x, one element per
// invocation. CPU twin: src/ops/nn/activation.ts.
//
//   dy, x, dx: (count)
//   KIND 0 'gelu': f′ = 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²),
//                  t = tanh(√(2/π)·(x + 0.044715·x³))
//   KIND 1 'tanh': f′ = 1 − tanh²(x)
//   KIND 2 'relu': f′ = 1 for x > 0, else 0 (0 at x = 0, as PyTorch)
//
// The kind is an override constant (see activation.wgsl). 2D grid past 65,535 workgroups.

override WORKGROUP_SIZE: u32 = 256u;
override KIND: u32 = 0u;

const GELU_SCALE: f32 = 0.7978845608028654; // √(2/π)
const GELU_CUBIC: f32 = 0.044715;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> dy: array<f32>;          // (count)
@group(0) @binding(2) var<storage, read> x: array<f32>;           // (count)
@group(0) @binding(3) var<storage, read_write> dx: array<f32>;    // (count)

// tanh with its argument clamped to ±15, where tanh is ±1 in f32 (see activation.wgsl).
fn safe_tanh(v: f32) -> f32 {
  return tanh(clamp(v, -15.0, 15.0));
}

fn derivative(v: f32) -> f32 {
  if (KIND == 0u) {
    // Past |x| = 10 the derivative is 1 (x > 0) or < 1e-35 (x < 0) in f32; clamping keeps
    // x·(1 − t²)·du from becoming 0·inf = NaN once x² overflows (|x| > 1.8e19).
    let xc = clamp(v, -10.0, 10.0);
    let t = safe_tanh(GELU_SCALE * (xc + GELU_CUBIC * xc * xc * xc));
    let du = GELU_SCALE * (1.0 + 3.0 * GELU_CUBIC * xc * xc);
    return 0.5 * (1.0 + t) + 0.5 * xc * (1.0 - t * t) * du;
  }
  if (KIND == 1u) {
    let t = safe_tanh(v);
    return 1.0 - t * t;
  }
  return select(0.0, 1.0, v > 0.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    dx[i] = dy[i] * derivative(x[i]);
  }
}
