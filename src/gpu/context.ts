/**
 * The one way the lab gets a GPU: `acquireGpu()` works in browsers, workers and Node, and returns
 * either a ready GpuContext or a typed reason the lab must fall back to the CPU.
 */
import {
  OPTIONAL_FEATURES,
  TRACKED_LIMITS,
  type AdapterSummary,
  type GpuUnavailableReason,
  type OptionalFeature,
  type TrackedLimit,
} from './adapter-summary';
import { BufferPool } from './buffer-pool';
import { CommandBatch } from './batch';
import { PipelineCache } from './pipeline-cache';
import { getWebGpuApi } from './webgpu-api';
import { errorText } from '../util/error-text';

export type GpuEvent =
  | { type: 'device-lost'; reason: GPUDeviceLostReason; message: string }
  | { type: 'uncaptured-error'; message: string };

export interface AcquireOptions {
  powerPreference?: GPUPowerPreference;
  /**
   * 'default' asks for the spec's default limits (portable); 'adapter' asks for everything the
   * adapter offers (benchmarks with large tensors).
   */
  limits?: 'default' | 'adapter';
}

export type GpuAcquisition =
  { ok: true; gpu: GpuContext } | { ok: false; reason: GpuUnavailableReason };

export class GpuContext {
  readonly pool: BufferPool;
  readonly pipelines: PipelineCache;
  private readonly listeners = new Set<(event: GpuEvent) => void>();
  private lostEvent: GpuEvent | undefined;

  constructor(
    /**
     * The GPU object the device came from. Held for the device's whole life: with Dawn in Node,
     * letting it be garbage-collected frees the native instance under a live device and crashes
     * the process at the next mapAsync.
     */
    private readonly instance: GPU,
    readonly device: GPUDevice,
    readonly summary: AdapterSummary,
  ) {
    this.pool = new BufferPool(device);
    this.pipelines = new PipelineCache(device);
    device.lost.then((info) => {
      this.lostEvent = { type: 'device-lost', reason: info.reason, message: info.message };
      this.emit(this.lostEvent);
    });
    device.addEventListener('uncapturederror', (event) => {
      this.emit({
        type: 'uncaptured-error',
        message: (event as GPUUncapturedErrorEvent).error.message,
      });
    });
  }

  has(feature: OptionalFeature): boolean {
    return this.summary.features.includes(feature);
  }

  get isLost(): boolean {
    return this.lostEvent !== undefined;
  }

  /** Subscribe to device loss and uncaptured errors. A device already lost is reported at once. */
  onEvent(listener: (event: GpuEvent) => void): () => void {
    this.listeners.add(listener);
    if (this.lostEvent) listener(this.lostEvent);
    return () => this.listeners.delete(listener);
  }

  beginBatch(label: string, timestampWrites?: GPUComputePassTimestampWrites): CommandBatch {
    return new CommandBatch(this, label, timestampWrites);
  }

  /** A pooled storage buffer holding `data`. */
  upload(data: Float32Array | Uint32Array | Int32Array, label = 'upload'): GPUBuffer {
    const buffer = this.pool.acquire(
      data.byteLength,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      label,
    );
    this.device.queue.writeBuffer(buffer, 0, data.buffer, data.byteOffset, data.byteLength);
    return buffer;
  }

  /** A pooled storage buffer of `byteLength` bytes that kernels write and readback copies from. */
  storage(byteLength: number, label = 'storage'): GPUBuffer {
    return this.pool.acquire(
      byteLength,
      GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      label,
    );
  }

  /**
   * Copies `byteLength` bytes of `source` to the CPU. This is a CPU-GPU sync point (mapAsync):
   * keep it out of inner loops and batch metrics into one buffer.
   */
  async read(source: GPUBuffer, byteLength: number): Promise<ArrayBuffer> {
    const staging = this.pool.acquire(
      byteLength,
      GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      'readback',
    );
    try {
      const batch = this.beginBatch('readback');
      batch.copy(source, staging, byteLength);
      batch.submit();
      await staging.mapAsync(GPUMapMode.READ, 0, byteLength);
      const copy = staging.getMappedRange(0, byteLength).slice(0);
      staging.unmap();
      return copy;
    } finally {
      this.pool.release(staging);
    }
  }

  async readF32(source: GPUBuffer, length: number): Promise<Float32Array> {
    return new Float32Array(await this.read(source, length * 4));
  }

  destroy(): void {
    this.pool.trim();
    this.device.destroy();
    void this.instance;
  }

  private emit(event: GpuEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

function readInfo(
  adapter: GPUAdapter,
): Pick<
  AdapterSummary,
  'vendor' | 'architecture' | 'device' | 'description' | 'isFallbackAdapter'
> {
  // GPUAdapterInfo fields are prototype getters: read them one by one (spreading gives {}).
  const info = adapter.info;
  const legacyFallback = (adapter as { isFallbackAdapter?: boolean }).isFallbackAdapter;
  const infoFallback = (info as { isFallbackAdapter?: boolean }).isFallbackAdapter;
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    device: info.device,
    description: info.description,
    isFallbackAdapter: Boolean(infoFallback ?? legacyFallback),
  };
}

export async function acquireGpu(options: AcquireOptions = {}): Promise<GpuAcquisition> {
  const found = await getWebGpuApi();
  if (!found.ok) return found;
  const { gpu: instance, runtime } = found.api;

  let adapter: GPUAdapter | null;
  try {
    adapter = await instance.requestAdapter({ powerPreference: options.powerPreference });
  } catch (error) {
    return { ok: false, reason: { code: 'no-adapter', message: errorText(error) } };
  }
  if (!adapter) {
    return {
      ok: false,
      reason: {
        code: 'no-adapter',
        message:
          runtime === 'node-dawn'
            ? 'Dawn found no GPU adapter (no Vulkan driver; on Debian, install "chromium" for SwiftShader and set VK_ICD_FILENAMES)'
            : 'the browser offers WebGPU but found no suitable GPU adapter',
      },
    };
  }

  const features = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  const requiredLimits: Record<string, number> = {};
  if (options.limits === 'adapter') {
    for (const name of TRACKED_LIMITS) requiredLimits[name] = adapter.limits[name];
  }
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({
      label: 'agent-rl-lab',
      requiredFeatures: features as GPUFeatureName[],
      requiredLimits,
    });
  } catch (error) {
    return { ok: false, reason: { code: 'device-request-failed', message: errorText(error) } };
  }
  const limits = Object.fromEntries(TRACKED_LIMITS.map((n) => [n, device.limits[n]])) as Record<
    TrackedLimit,
    number
  >;
  const summary: AdapterSummary = { runtime, ...readInfo(adapter), features, limits };
  return { ok: true, gpu: new GpuContext(instance, device, summary) };
}
