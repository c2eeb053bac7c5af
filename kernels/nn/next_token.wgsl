// One step of batched generation after sampling: each row's token at position pos + 1 — the
// prompt's next token while inside the prompt, else the sampled one (until a stop token or the
// row's budget of new tokens), else <pad>. CPU twin: src/ops/nn/next-token.ts (read it for the rule).
// One invocation per row.

override WORKGROUP_SIZE: u32 = 64u;

// At most 4 stop tokens, as uniforms: the spec's default limit of 8 storage buffers per shader
// stage is taken by the 8 bindings below.
struct Params {
  batch: u32,
  prompt_width: u32,
  max_length: u32,
  pos: u32,
  max_new_tokens: u32,
  pad_token: i32,
  stop_count: u32,
  stop0: i32,
  stop1: i32,
  stop2: i32,
  stop3: i32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> prompts: array<i32>;          // lengths (B), then tokens (B, P)
@group(0) @binding(2) var<storage, read> sampled: array<i32>;          // (B)
@group(0) @binding(3) var<storage, read> sampledLogprobs: array<f32>;  // (B)
@group(0) @binding(4) var<storage, read_write> input: array<i32>;      // (B)
@group(0) @binding(5) var<storage, read_write> done: array<i32>;       // (B)
@group(0) @binding(6) var<storage, read_write> tokens: array<i32>;     // (B, L)
@group(0) @binding(7) var<storage, read_write> logprobs: array<f32>;   // (B, L)
@group(0) @binding(8) var<storage, read_write> mask: array<f32>;       // (B, L)

fn is_stop(token: i32) -> bool {
  let stops = array<i32, 4>(params.stop0, params.stop1, params.stop2, params.stop3);
  for (var i = 0u; i < min(params.stop_count, 4u); i++) {
    if (stops[i] == token) {
      return true;
    }
  }
  return false;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= params.batch) {
    return;
  }
  let next = params.pos + 1u;
  let prompt_length = u32(prompts[b]);
  var token = params.pad_token;
  var generated = 0.0;
  var logprob = 0.0;
  if (next < prompt_length) {
    token = prompts[params.batch + b * params.prompt_width + next];
  } else if (done[b] == 0) {
    token = sampled[b];
    generated = 1.0;
    logprob = sampledLogprobs[b];
    let produced = next - prompt_length + 1u;
    if (is_stop(token) || produced >= params.max_new_tokens) {
      done[b] = 1;
    }
  }
  let at = b * params.max_length + next;
  tokens[at] = token;
  logprobs[at] = logprob;
  mask[at] = generated;
  input[b] = token;
}
