/**
 * Test helper for the nn layer kernels: several tensors packed into ONE GPU buffer, each at a
 * non-zero offset aligned to 64 floats (256 bytes, minStorageBufferOffsetAlignment), the way model
 * parameters live in one flat buffer. Gaps hold a sentinel so tests can check that a kernel wrote
 * nothing outside its slices.
 */
import type { GpuContext } from '../../../src/gpu/context';

const ALIGN = 64; // floats = 256 bytes
const SENTINEL = -12345.5;

export class PackedSlices<K extends string> {
  readonly buffer: GPUBuffer;
  private readonly offsets = new Map<K, [offset: number, length: number]>();
  private readonly total: number;
  private readonly data: Float32Array;

  /** `parts`: the initial contents of each slice, or its length (then zero-filled). */
  constructor(
    private readonly gpu: GpuContext,
    parts: Record<K, Float32Array | number>,
  ) {
    let offset = ALIGN; // start past one aligned block: every slice offset is non-zero
    for (const [name, part] of Object.entries(parts) as [K, Float32Array | number][]) {
      const length = typeof part === 'number' ? part : part.length;
      this.offsets.set(name, [offset, length]);
      offset += Math.ceil((length + 1) / ALIGN) * ALIGN; // ≥ 1 sentinel after each slice
    }
    this.total = offset;
    this.data = new Float32Array(this.total).fill(SENTINEL);
    for (const [name, part] of Object.entries(parts) as [K, Float32Array | number][]) {
      const [start, length] = this.offsets.get(name)!;
      if (typeof part === 'number') this.data.fill(0, start, start + length);
      else this.data.set(part, start);
    }
    this.buffer = gpu.upload(this.data, 'packed slices');
  }

  /** The binding of slice `name`: { buffer, offset, size } in bytes. */
  ref(name: K): GPUBufferBinding {
    const [offset, length] = this.offsets.get(name)!;
    return { buffer: this.buffer, offset: offset * 4, size: length * 4 };
  }

  /** Reads the whole buffer back (one sync point): each slice, and whether every gap is intact. */
  async read(): Promise<{ slices: Record<K, Float32Array>; gapsIntact: boolean }> {
    const all = await this.gpu.readF32(this.buffer, this.total);
    const slices = {} as Record<K, Float32Array>;
    const inSlice = new Uint8Array(this.total);
    for (const [name, [offset, length]] of this.offsets) {
      slices[name] = all.slice(offset, offset + length);
      inSlice.fill(1, offset, offset + length);
    }
    const gapsIntact = all.every((v, i) => inSlice[i] === 1 || v === SENTINEL);
    return { slices, gapsIntact };
  }

  release(): void {
    this.gpu.pool.release(this.buffer);
  }
}
