// Input validation shared by kernels that check their inputs. A wrapper prepends this file to the
// kernel's source (see src/gpu/input-status.ts); the kernel itself declares the binding
//   @group(0) @binding(N) var<storage, read_write> status: array<atomic<u32>>;
// Two words per checked tensor k: status[2k] counts non-finite elements, status[2k + 1] holds the
// smallest non-finite index (0xffffffff when there is none).

fn is_finite_f32(x: f32) -> bool {
  // Exponent bits all ones ⇔ ±Inf or NaN. Bit test, because x != x can be optimized away.
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

// Counts one bad value of slot `slot` at `index` (also for slots that check something other than
// finiteness, e.g. token ids out of range).
fn report_invalid(slot: u32, index: u32) {
  atomicAdd(&status[2u * slot], 1u);
  atomicMin(&status[2u * slot + 1u], index);
}

fn check_finite(slot: u32, index: u32, x: f32) {
  if (!is_finite_f32(x)) {
    report_invalid(slot, index);
  }
}

// A quiet NaN made at run time (a NaN constant expression is a shader-creation error), for the
// outputs of rows whose input was rejected, so they cannot pass for results.
fn runtime_nan() -> f32 {
  var bits = 0x7fc00000u;
  return bitcast<f32>(bits);
}
