// Loss aggregation, pass 2 of 3: rows → the loss, per-row scales and masked means.
// CPU reference: aggregationRowScales() and aggregateChecked() in src/ops/loss-aggregation.ts.
//
// One workgroup. `partials` is (rows, columns): column 0 = Σ_t m·ℓ, column 1 = Σ_t m, columns ≥ 2
// are further per-row sums of masked quantities (e.g. the policy loss's clip counts). Writes
//   rowScale[r] = ∂loss/∂(Σ_t m·ℓ of row r)   so weights[r, t] = m·rowScale[r]
//   out[0]       = loss = Σ_r rowScale[r]·partials[r, 0]
//   out[k − 1]   = Σ_r partials[r, k] / Σ m   for k ≥ 2 (0 when the mask is empty)
// Modes (uniform `mode`): 0 token-mean (1/Σm); 1 seq-mean-token-mean (1/(non-empty rows · Σ_t m),
// rows with an empty mask get 0); 2 a constant divisor for every row (seq-mean-token-sum counting
// every row: B; seq-mean-token-sum-norm likewise: B·lossScaleFactor; dr-grpo: B·maxCompletionLength);
// 3 per non-empty row: 1/(non-empty rows · divisor), empty rows get 0 (the seq-mean-token-sum modes
// with empty rows excluded, verl's definition: divisor 1 or lossScaleFactor). An all-zero mask
// gives 0 everywhere. f32 accumulation.
// The wrapper prepends kernels/lib/workgroup_reduce.wgsl (workgroup_sum).

override WORKGROUP_SIZE: u32 = 64u;

struct Params {
  rows: u32,
  columns: u32,
  mode: u32,
  divisor: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> partials: array<f32>;       // (rows, columns)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;      // (columns − 1)
@group(0) @binding(3) var<storage, read_write> rowScale: array<f32>; // (rows)

alias ScratchValue = vec2f;
var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_index) lid: u32) {
  let columns = params.columns;

  // Σ m and the number of rows with at least one unmasked token.
  var acc = vec2f(0.0);
  for (var r = lid; r < params.rows; r += WORKGROUP_SIZE) {
    let n = partials[r * columns + 1u];
    acc += vec2f(n, select(0.0, 1.0, n > 0.0));
  }
  scratch[lid] = acc;
  let counts = workgroup_sum(lid);
  let tokens = counts.x;
  let non_empty = counts.y;

  // #region row-scale
  // Per-row scale and the loss.
  var loss = 0.0;
  for (var r = lid; r < params.rows; r += WORKGROUP_SIZE) {
    let n = partials[r * columns + 1u];
    var s = 0.0;
    if (tokens > 0.0) {
      if (params.mode == 0u) {
        s = 1.0 / tokens;
      } else if (params.mode == 1u) {
        s = select(0.0, 1.0 / (non_empty * n), n > 0.0);
      } else if (params.mode == 3u) {
        s = select(0.0, 1.0 / (non_empty * params.divisor), n > 0.0);
      } else {
        s = 1.0 / params.divisor;
      }
    }
    rowScale[r] = s;
    loss += s * partials[r * columns];
  }
  // #endregion row-scale
  scratch[lid] = vec2f(loss, 0.0);
  let total = workgroup_sum(lid).x;
  if (lid == 0u) {
    out[0] = total;
  }

  // Masked means of the extra columns, two at a time.
  for (var k = 2u; k < columns; k += 2u) {
    let has_second = k + 1u < columns;
    var sums = vec2f(0.0);
    for (var r = lid; r < params.rows; r += WORKGROUP_SIZE) {
      let second = select(0.0, partials[r * columns + min(k + 1u, columns - 1u)], has_second);
      sums += vec2f(partials[r * columns + k], second);
    }
    scratch[lid] = sums;
    let means = select(vec2f(0.0), workgroup_sum(lid) / tokens, tokens > 0.0);
    if (lid == 0u) {
      out[k - 1u] = means.x;
      if (has_second) {
        out[k] = means.y;
      }
    }
  }
}
