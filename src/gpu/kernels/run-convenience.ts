/**
 * Pieces of the `xGpu(...)` convenience paths (check → upload → encode → submit → read back →
 * release): the pooled buffers of one call, and the read-back that waits on the input status and
 * the outputs together (one CPU-GPU sync point).
 */
import type { GpuContext } from '../context';
import type { InputStatus } from '../input-status';

/** The pooled buffers of one convenience call, released together in `finally`. */
export class PooledBuffers {
  private readonly held: GPUBuffer[] = [];

  constructor(private readonly gpu: GpuContext) {}

  upload(data: Float32Array | Int32Array | Uint32Array, label: string): GPUBuffer {
    return this.keep(this.gpu.upload(data, label));
  }

  /** A storage buffer of `elements` f32. */
  storage(elements: number, label: string): GPUBuffer {
    return this.keep(this.gpu.storage(elements * 4, label));
  }

  release(): void {
    for (const buffer of this.held.splice(0)) this.gpu.pool.release(buffer);
  }

  private keep(buffer: GPUBuffer): GPUBuffer {
    this.held.push(buffer);
    return buffer;
  }
}

/** One f32 output to read back: the buffer and its length in elements; undefined: not wanted. */
export type F32Read = readonly [buffer: GPUBuffer, length: number] | undefined;

type ReadResult<T> = T extends undefined ? undefined : Float32Array;

/**
 * After `batch.submit()`: reads the outputs back while checking the input status; every read waits
 * on the same submission, so this is one CPU-GPU sync point. Waits for all of them, then throws the
 * status's OpInputError first (bad input), else the first failed read; returns the outputs in order
 * (undefined for an undefined entry).
 */
export async function readChecked<const R extends readonly F32Read[]>(
  gpu: GpuContext,
  status: InputStatus,
  reads: R,
): Promise<{ -readonly [K in keyof R]: ReadResult<R[K]> }> {
  const [[checked], outputs] = await Promise.all([
    Promise.allSettled([status.check()]),
    Promise.allSettled(reads.map((read) => read && gpu.readF32(read[0], read[1]))),
  ]);
  if (checked?.status === 'rejected') throw checked.reason;
  return outputs.map((out) => {
    if (out.status === 'rejected') throw out.reason;
    return out.value;
  }) as { -readonly [K in keyof R]: ReadResult<R[K]> };
}

/** Σ mask over a 0/1 mask: the `tokens` count the loss ops return. */
export function maskTokens(mask: Float32Array): number {
  let tokens = 0;
  for (const m of mask) tokens += m;
  return tokens;
}
