/**
 * WGSL library code that wrappers prepend to kernel sources (WGSL has no #include). Library files
 * declare functions only — no bindings, no `Params` struct — so defineKernel's check of a kernel's
 * declaration against its WGSL still sees only the kernel's own interface. Functions may use
 * module-scope names the including kernel declares (documented at the top of each file).
 */
import workgroupReduceWgsl from '../../kernels/lib/workgroup_reduce.wgsl?raw';

/**
 * workgroup_sum(lid) and workgroup_max(lid): tree reductions over the kernel's
 * `var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>`.
 */
export const WORKGROUP_REDUCE_WGSL = workgroupReduceWgsl;
