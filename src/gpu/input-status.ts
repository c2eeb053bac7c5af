/**
 * NaN/Inf detection on the GPU path. Kernels that validate inputs prepend kernels/lib/input_status.wgsl
 * and bind a status buffer; the wrapper resets it before the dispatch and checks it after, throwing
 * the same OpInputError class the CPU reference throws (naming the op, the tensor and the first bad
 * index).
 */
import statusWgsl from '../../kernels/lib/input_status.wgsl?raw';
import { OpInputError } from '../ops/errors';
import type { GpuContext } from './context';

/** Prepend to the source of a kernel that declares `status` and calls check_finite(). */
export const INPUT_STATUS_WGSL = statusWgsl;

const NONE = 0xffffffff;

export class InputStatus {
  readonly buffer: GPUBuffer;
  private readonly byteLength: number;

  /** `tensors[k]` is the name reported for slot k of check_finite(). */
  constructor(
    private readonly gpu: GpuContext,
    readonly op: string,
    readonly tensors: readonly string[],
  ) {
    const initial = new Uint32Array(tensors.length * 2);
    for (let k = 0; k < tensors.length; k++) initial[2 * k + 1] = NONE;
    this.byteLength = initial.byteLength;
    this.buffer = gpu.upload(initial, `${op} input status`);
  }

  /**
   * Reads the counters back (a CPU-GPU sync point) and throws an OpInputError for the first tensor
   * that held a non-finite value. Call after the batch that ran the kernel was submitted.
   */
  async check(): Promise<void> {
    const words = new Uint32Array(await this.gpu.read(this.buffer, this.byteLength));
    this.tensors.forEach((tensor, k) => {
      const count = words[2 * k]!;
      if (count > 0) {
        throw new OpInputError(
          this.op,
          tensor,
          `must be finite, but index ${words[2 * k + 1]} is not (${count} non-finite value${count > 1 ? 's' : ''}, found on the GPU)`,
        );
      }
    });
  }

  release(): void {
    this.gpu.pool.release(this.buffer);
  }
}
