// Workgroup tree reductions shared by kernels that reduce within a workgroup. A wrapper prepends
// this file to the kernel's source (see src/gpu/wgsl-lib.ts); the kernel itself declares
//   WORKGROUP_SIZE             (a pipeline-overridable constant, a power of two)
//   alias ScratchValue = f32;   (or vec2f / vec3f / vec4f: several quantities reduced in one tree)
//   var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>;
// Each thread stores its partial in scratch[lid], then every thread calls the reduction from
// workgroup-uniform control flow. Every thread gets the result, and scratch may be written again
// straight away (the last barrier keeps those writes behind every read of scratch[0]).

// Σ over scratch[0..WORKGROUP_SIZE), component-wise.
fn workgroup_sum(lid: u32) -> ScratchValue {
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      scratch[lid] = scratch[lid] + scratch[lid + stride];
    }
  }
  workgroupBarrier();
  let result = scratch[0];
  workgroupBarrier();
  return result;
}

// max over scratch[0..WORKGROUP_SIZE), component-wise.
fn workgroup_max(lid: u32) -> ScratchValue {
  for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
    workgroupBarrier();
    if (lid < stride) {
      scratch[lid] = max(scratch[lid], scratch[lid + stride]);
    }
  }
  workgroupBarrier();
  let result = scratch[0];
  workgroupBarrier();
  return result;
}
