/**
 * WGSL library code that wrappers prepend to kernel sources (WGSL has no #include). Library files
 * declare functions (and at most a type alias the kernel's bindings use) — no bindings, no
 * `Params` struct — so defineKernel's check of a kernel's
 * declaration against its WGSL still sees only the kernel's own interface. Functions may use
 * module-scope names the including kernel declares (documented at the top of each file).
 */
import counterRngWgsl from '../../kernels/lib/counter_rng.wgsl?raw';
import rowSumWgsl from '../../kernels/lib/row_sum.wgsl?raw';
import rowReadsScalarWgsl from '../../kernels/lib/row_reads_scalar.wgsl?raw';
import rowReadsVec4Wgsl from '../../kernels/lib/row_reads_vec4.wgsl?raw';
import workgroupReduceWgsl from '../../kernels/lib/workgroup_reduce.wgsl?raw';

/**
 * workgroup_sum(lid) and workgroup_max(lid): tree reductions over the kernel's
 * `var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>`.
 */
export const WORKGROUP_REDUCE_WGSL = workgroupReduceWgsl;

/**
 * row_sum(lid, value): Σ over the THREADS_PER_ROW threads that share a row, for the norms' row
 * kernels, over the kernel's `var<workgroup> scratch: array<ScratchValue, WORKGROUP_SIZE>`.
 */
export const ROW_SUM_WGSL = rowSumWgsl;

/**
 * read_quad(start, k, lid) and read_logit(i) over the kernel's `logits: array<RowElement>`, for
 * one-workgroup-per-row kernels: 16-byte loads where every row length is a multiple of 4 (vec4),
 * scalar loads otherwise. rowReadsWgsl(cols) picks the one a row length allows.
 */
export const ROW_READS_WGSL = { scalar: rowReadsScalarWgsl, vec4: rowReadsVec4Wgsl } as const;
export type RowReads = keyof typeof ROW_READS_WGSL;

/** The row reads a row of `cols` elements allows: vec4 needs every row to start on 16 bytes. */
export function rowReadsFor(cols: number): RowReads {
  return cols % 4 === 0 ? 'vec4' : 'scalar';
}

/**
 * fmix32(x) and counter_uniform(seed, step, row): the WGSL mirror of src/util/counter-rng.ts, for
 * the sampling kernels.
 */
export const COUNTER_RNG_WGSL = counterRngWgsl;
