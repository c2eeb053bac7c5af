/**
 * Dispatch helpers shared by the advantage-estimator wrappers (gae, whiten, group advantages,
 * REINFORCE++, broadcast): grids of one invocation per item, and binding-size checks.
 */
import { workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { GpuLimitError } from '../errors';

/** Workgroups for `count` invocations of `workgroupSize` each, over (x, y) past the limit. */
export function invocationGrid(
  gpu: GpuContext,
  count: number,
  workgroupSize: number,
): [number, number] {
  return workgroupGrid(
    Math.ceil(count / workgroupSize),
    gpu.summary.limits.maxComputeWorkgroupsPerDimension,
  );
}

/** Throws a GpuLimitError when an f32 tensor of `elements` exceeds one storage binding. */
export function checkBindingSize(gpu: GpuContext, elements: number, what: string): void {
  const bytes = elements * 4;
  const max = gpu.summary.limits.maxStorageBufferBindingSize;
  if (bytes > max) {
    throw new GpuLimitError('maxStorageBufferBindingSize (bytes)', bytes, max, what);
  }
}

/** The pooled buffers of one convenience call, released together in `finally`. */
export class PooledBuffers {
  private readonly held: GPUBuffer[] = [];

  constructor(private readonly gpu: GpuContext) {}

  upload(data: Float32Array, label: string): GPUBuffer {
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
