/**
 * NaN/Inf detection on the GPU path. Kernels that validate inputs prepend kernels/lib/input_status.wgsl
 * and bind a status buffer; the wrapper resets it before the dispatch and checks it after, throwing
 * the same OpInputError class the CPU reference throws (naming the op, the tensor and the first bad
 * index).
 */
import statusWgsl from '../../kernels/lib/input_status.wgsl?raw';
import { reflectSlots } from './wgsl-reflect';
import { OpInputError } from '../ops/errors';
import type { GpuContext } from './context';

/** Prepend to the source of a kernel that declares `status` and calls check_finite(). */
export const INPUT_STATUS_WGSL = statusWgsl;

const NONE = 0xffffffff;

/**
 * One checked tensor. A plain name reports non-finite values; `problem` words the error for slots
 * that count something else (e.g. token ids out of range, with the row as the index).
 */
export type StatusSlot =
  string | { tensor: string; problem: (index: number, count: number) => string };

function nonFinite(index: number, count: number): string {
  const plural = count > 1 ? 's' : '';
  return `must be finite, but index ${index} is not (${count} non-finite value${plural}, found on the GPU)`;
}

export class InputStatus {
  readonly buffer: GPUBuffer;
  private readonly byteLength: number;

  /** `slots[k]` describes slot k of check_finite() (or of the kernel's own counters). */
  constructor(
    private readonly gpu: GpuContext,
    readonly op: string,
    readonly slots: readonly StatusSlot[],
  ) {
    const initial = new Uint32Array(slots.length * 2);
    for (let k = 0; k < slots.length; k++) initial[2 * k + 1] = NONE;
    this.byteLength = initial.byteLength;
    this.buffer = gpu.upload(initial, `${op} input status`);
  }

  /**
   * Reads the counters back (a CPU-GPU sync point) and throws an OpInputError for the first slot
   * that counted a bad value. Call after the batch that ran the kernel was submitted.
   */
  async check(): Promise<void> {
    const words = await this.words();
    this.slots.forEach((slot, k) => {
      const count = words[2 * k]!;
      if (count === 0) return;
      const index = words[2 * k + 1]!;
      const [tensor, problem] =
        typeof slot === 'string' ? [slot, nonFinite] : [slot.tensor, slot.problem];
      throw new OpInputError(this.op, tensor, problem(index, count));
    });
  }

  /** The count of bad values per slot, in slot order (a sync point); never throws for them. */
  async counts(): Promise<number[]> {
    const words = await this.words();
    return this.slots.map((_, k) => words[2 * k]!);
  }

  private async words(): Promise<Uint32Array> {
    return new Uint32Array(await this.gpu.read(this.buffer, this.byteLength));
  }

  release(): void {
    this.gpu.pool.release(this.buffer);
  }
}

/**
 * A kernel's status slots in the order its `const SLOT_NAME = k;` constants give them (the
 * reflected names in camelCase, e.g. SLOT_DLOGP → dlogp), each described by `byName`; the kernel
 * is the one place that says which slot is which.
 */
export function statusSlotsOf(source: string, byName: Record<string, StatusSlot>): StatusSlot[] {
  const slots = reflectSlots(source, 'SLOT_');
  const names = [...slots].sort((a, b) => a[1] - b[1]).map(([name]) => name);
  const unknown = names.filter((name) => !(name in byName));
  if (unknown.length || names.length !== Object.keys(byName).length) {
    throw new Error(
      `status slots: the kernel declares [${names.join(', ')}], the wrapper describes ` +
        `[${Object.keys(byName).join(', ')}]`,
    );
  }
  return names.map((name) => byName[name]!);
}
