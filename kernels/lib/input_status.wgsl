// Input validation shared by kernels that check their inputs. A wrapper prepends this file to the
// kernel's source (see src/gpu/input-status.ts); the kernel itself declares the binding
//   @group(0) @binding(N) var<storage, read_write> status: array<atomic<u32>>;
// Two words per checked tensor k: status[2k] counts non-finite elements, status[2k + 1] holds the
// smallest non-finite index (0xffffffff when there is none).

fn is_finite_f32(x: f32) -> bool {
  // Exponent bits all ones ⇔ ±Inf or NaN. Bit test, because x != x can be optimized away.
  return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u;
}

fn check_finite(slot: u32, index: u32, x: f32) {
  if (!is_finite_f32(x)) {
    atomicAdd(&status[2u * slot], 1u);
    atomicMin(&status[2u * slot + 1u], index);
  }
}
