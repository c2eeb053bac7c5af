// Σ over the threads that share a row, for the row kernels of the norms (LayerNorm, RMSNorm),
// where THREADS_PER_ROW threads split each row. A wrapper prepends this file to the kernel's
// source (src/gpu/wgsl-lib.ts); the kernel itself declares
//   WORKGROUP_SIZE, THREADS_PER_ROW   (pipeline-overridable constants; THREADS_PER_ROW a power of
//                                      two dividing WORKGROUP_SIZE)
//   alias ScratchValue = f32;         (or vec2f: two quantities summed in one tree)
//   var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;
// Call from workgroup-uniform control flow (there are barriers unless THREADS_PER_ROW is 1). Every
// thread of the row gets the row's sum, and scratch may be written again straight away.

fn row_sum(lid: u32, value: ScratchValue) -> ScratchValue {
  if (THREADS_PER_ROW == 1u) {
    return value;
  }
  let lane = lid % THREADS_PER_ROW;
  scratch[lid] = value;
  for (var stride = THREADS_PER_ROW / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lane < stride) {
      scratch[lid] = scratch[lid] + scratch[lid + stride];
    }
  }
  workgroupBarrier();
  let total = scratch[lid - lane];
  workgroupBarrier(); // the next call writes scratch again
  return total;
}
