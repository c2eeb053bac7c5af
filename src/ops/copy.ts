/**
 * Element copy: the CPU twin of kernels/copy.wgsl. The kernel exists as a bandwidth ceiling:
 * benchmarks report each kernel's effective bandwidth as a fraction of what a plain copy of the
 * same bytes reaches on the same device.
 *
 * A copy is defined for every value, NaN and ±Inf included, so there is no finiteness check.
 */
import { OpInputError } from './errors';
import { checkOneOf } from './validate';

const OP = 'copy';

/** Workgroup sizes the copy kernel is compiled for (spec default limit: 256 invocations). */
export const COPY_WORKGROUP_SIZES = [64, 128, 256] as const;
export type CopyWorkgroupSize = (typeof COPY_WORKGROUP_SIZES)[number];

export interface CopyOptions {
  /**
   * GPU only (the CPU copy ignores it): threads per workgroup, one of 64, 128, 256. Each thread
   * moves one vec4 (16 bytes). Default 256.
   */
  workgroupSize?: CopyWorkgroupSize;
}

/** The largest copy: 2^31 − 1 elements (and the device's binding limit on the GPU). */
export const COPY_MAX_LENGTH = 2 ** 31 - 1;

/** Checks shared with the GPU wrapper. x: (L) with 1 ≤ L ≤ 2^31 − 1. */
export function checkCopyInput(x: Float32Array, options: CopyOptions = {}): void {
  if (!(x instanceof Float32Array)) {
    throw new OpInputError(OP, 'x', 'must be a Float32Array');
  }
  if (x.length < 1 || x.length > COPY_MAX_LENGTH) {
    throw new OpInputError(
      OP,
      'x',
      `must have between 1 and ${COPY_MAX_LENGTH} elements, got ${x.length}`,
    );
  }
  if (options.workgroupSize !== undefined) {
    checkOneOf(OP, 'workgroupSize', options.workgroupSize, COPY_WORKGROUP_SIZES);
  }
}

/** x: (L) → a new array with the same L values (bit for bit). */
export function copy(x: Float32Array, options: CopyOptions = {}): Float32Array {
  checkCopyInput(x, options);
  return x.slice();
}
