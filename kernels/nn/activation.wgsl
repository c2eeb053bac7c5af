// Elementwise activation y = f(x), one element per invocation. CPU twin: src/ops/nn/activation.ts.
//
//   x, y: (count)
//   KIND 0 'gelu' (tanh approximation, GPT-2): 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))
//   KIND 1 'tanh'
//   KIND 2 'relu': max(0, x)
//
// The kind is an override constant: one pipeline per kind, the branch folded away at pipeline
// creation (3 kinds, so 3 cached pipelines). Invocations spread over a 2D grid past 65,535
// workgroups; ids past `count` do nothing.

override WORKGROUP_SIZE: u32 = 256u;
override KIND: u32 = 0u;

const GELU_SCALE: f32 = 0.7978845608028654; // √(2/π)
const GELU_CUBIC: f32 = 0.044715;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (count)
@group(0) @binding(2) var<storage, read_write> y: array<f32>;    // (count)

// tanh with its argument clamped to ±15, where tanh is ±1 in f32: some implementations compute
// tanh from exponentials that overflow to inf/inf = NaN for large arguments.
fn safe_tanh(v: f32) -> f32 {
  return tanh(clamp(v, -15.0, 15.0));
}

fn activate(v: f32) -> f32 {
  if (KIND == 0u) {
    return 0.5 * v * (1.0 + safe_tanh(GELU_SCALE * (v + GELU_CUBIC * v * v * v)));
  }
  if (KIND == 1u) {
    return safe_tanh(v);
  }
  return max(v, 0.0);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = (wid.x + wid.y * groups.x) * WORKGROUP_SIZE + lid;
  if (i < params.count) {
    y[i] = activate(x[i]);
  }
}
