/**
 * One command encoder per unit of work (a training step, a benchmark repetition): dispatches are
 * recorded into compute passes, copies between them, and everything is submitted at once. Uniform
 * buffers for each dispatch come from the pool and go back on submit; queue ordering makes that
 * safe, since a later writeBuffer runs after this submission.
 */
import type { GpuContext } from './context';
import { GpuLimitError } from './errors';
import type { Kernel } from './kernel';

/**
 * A storage binding: a whole buffer, or a slice { buffer, offset, size } of one (offset a multiple
 * of minStorageBufferOffsetAlignment, 256 bytes by default) — e.g. one tensor of a model's flat
 * parameter buffer.
 */
export type BufferRef = GPUBuffer | GPUBufferBinding;

export interface DispatchArgs<S extends string, U extends string> {
  pipeline: GPUComputePipeline;
  buffers: Record<S, BufferRef>;
  uniforms: Record<U, number>;
  /** Workgroup counts (x, y, z); see workgroupGrid() for counts above the per-dimension limit. */
  workgroups: readonly [number, number?, number?];
}

export class CommandBatch {
  readonly encoder: GPUCommandEncoder;
  private pass: GPUComputePassEncoder | undefined;
  private passes = 0;
  private readonly transient: GPUBuffer[] = [];
  private submitted = false;

  constructor(
    private readonly gpu: GpuContext,
    readonly label: string,
    private readonly timestampWrites?: GPUComputePassTimestampWrites,
  ) {
    this.encoder = gpu.device.createCommandEncoder({ label });
  }

  dispatch<S extends string, U extends string>(
    kernel: Kernel<S, U>,
    args: DispatchArgs<S, U>,
  ): void {
    const { device, pool, pipelines } = this.gpu;
    const params = pool.acquire(
      kernel.uniformByteSize,
      GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      `${kernel.name} params`,
    );
    this.transient.push(params);
    device.queue.writeBuffer(params, 0, kernel.packUniforms(args.uniforms));
    const entries: GPUBindGroupEntry[] = [{ binding: 0, resource: { buffer: params } }];
    kernel.storage.forEach(({ name }, i) => {
      const ref = args.buffers[name];
      entries.push({ binding: i + 1, resource: 'buffer' in ref ? ref : { buffer: ref } });
    });
    const bindGroup = device.createBindGroup({
      label: `${kernel.name} bind group`,
      layout: pipelines.bindGroupLayout(kernel),
      entries,
    });
    const [x, y = 1, z = 1] = args.workgroups;
    const max = this.gpu.summary.limits.maxComputeWorkgroupsPerDimension;
    for (const count of [x, y, z]) {
      if (count > max) {
        throw new GpuLimitError('workgroups per dimension', count, max, kernel.name);
      }
    }
    const pass = this.computePass();
    pass.setPipeline(args.pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(x, y, z);
  }

  /** Copies `byteLength` bytes from the start of `source` to `destination` at `destinationOffset`. */
  copy(source: GPUBuffer, destination: GPUBuffer, byteLength: number, destinationOffset = 0): void {
    this.endPass();
    this.encoder.copyBufferToBuffer(source, 0, destination, destinationOffset, byteLength);
  }

  /** Copies `byteLength` bytes of `source` at `sourceOffset` to `destination` at `destinationOffset`. */
  copyRange(
    source: GPUBuffer,
    sourceOffset: number,
    destination: GPUBuffer,
    destinationOffset: number,
    byteLength: number,
  ): void {
    this.endPass();
    this.encoder.copyBufferToBuffer(
      source,
      sourceOffset,
      destination,
      destinationOffset,
      byteLength,
    );
  }

  /** Zeroes the first `byteLength` bytes of `buffer` (a multiple of 4), in order with the dispatches. */
  clear(buffer: GPUBuffer, byteLength: number): void {
    this.endPass();
    this.encoder.clearBuffer(buffer, 0, byteLength);
  }

  /** Ends the open pass (if any); later dispatches open a new one. */
  endPass(): void {
    this.pass?.end();
    this.pass = undefined;
  }

  submit(): void {
    if (this.submitted) throw new Error(`CommandBatch "${this.label}" was already submitted`);
    this.submitted = true;
    this.endPass();
    this.gpu.device.queue.submit([this.encoder.finish()]);
    for (const buffer of this.transient) this.gpu.pool.release(buffer);
  }

  private computePass(): GPUComputePassEncoder {
    if (this.pass) return this.pass;
    if (this.timestampWrites && this.passes > 0) {
      throw new Error(`CommandBatch "${this.label}": a timed batch must stay in one compute pass`);
    }
    this.passes += 1;
    this.pass = this.encoder.beginComputePass({
      label: this.label,
      ...(this.timestampWrites ? { timestampWrites: this.timestampWrites } : {}),
    });
    return this.pass;
  }
}

/**
 * Splits `count` workgroups over x and y when it exceeds the per-dimension limit (65,535 by
 * default). Kernels recover the flat index as `wid.x + wid.y * num_workgroups.x` and skip ids ≥ count.
 */
export function workgroupGrid(count: number, maxPerDimension: number): [number, number] {
  if (count <= maxPerDimension) return [Math.max(1, count), 1];
  const y = Math.ceil(count / maxPerDimension);
  return [Math.ceil(count / y), y];
}
