/**
 * Reuses GPU buffers by (usage, size) so a training loop that repeats the same shapes allocates
 * nothing after its first step. Sizes round up to 256 bytes, which also satisfies the alignment
 * that copies and bindings need.
 */

export interface BufferPoolStats {
  /** Buffers created over the pool's life; flat across steps means no per-step allocation. */
  created: number;
  inUse: number;
  free: number;
  /** Bytes held by live buffers, in use or free. */
  bytes: number;
}

const SIZE_ALIGNMENT = 256;

export function alignedSize(byteLength: number): number {
  return Math.max(SIZE_ALIGNMENT, Math.ceil(byteLength / SIZE_ALIGNMENT) * SIZE_ALIGNMENT);
}

export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly inUse = new Set<GPUBuffer>();
  private created = 0;
  private bytes = 0;

  constructor(private readonly device: GPUDevice) {}

  /** A buffer of at least `byteLength` bytes with exactly `usage`. Give it back with release(). */
  acquire(byteLength: number, usage: GPUBufferUsageFlags, label = 'pooled'): GPUBuffer {
    const size = alignedSize(byteLength);
    const reusable = this.free.get(key(usage, size))?.pop();
    const buffer = reusable ?? this.create(size, usage, label);
    this.inUse.add(buffer);
    return buffer;
  }

  release(buffer: GPUBuffer): void {
    if (!this.inUse.delete(buffer)) {
      throw new Error(`BufferPool.release: buffer "${buffer.label}" is not in use by this pool`);
    }
    const bucket = key(buffer.usage, buffer.size);
    const list = this.free.get(bucket);
    if (list) list.push(buffer);
    else this.free.set(bucket, [buffer]);
  }

  /** Destroys every free buffer (buffers in use are left alone). */
  trim(): void {
    for (const list of this.free.values()) {
      for (const buffer of list) {
        this.bytes -= buffer.size;
        buffer.destroy();
      }
    }
    this.free.clear();
  }

  stats(): BufferPoolStats {
    let free = 0;
    for (const list of this.free.values()) free += list.length;
    return { created: this.created, inUse: this.inUse.size, free, bytes: this.bytes };
  }

  private create(size: number, usage: GPUBufferUsageFlags, label: string): GPUBuffer {
    this.created += 1;
    this.bytes += size;
    return this.device.createBuffer({ size, usage, label });
  }
}

function key(usage: GPUBufferUsageFlags, size: number): string {
  return `${usage}:${size}`;
}
