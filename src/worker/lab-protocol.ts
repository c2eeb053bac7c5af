/**
 * The only contract between the UI and the lab worker. Both `expose()` (worker) and `wrap<T>()`
 * (UI) use LabWorkerApi, so a change here is checked on both sides.
 */
import type { AdapterSummary, GpuUnavailableReason } from '../gpu/adapter-summary';
import type { BackendChoice } from '../gpu/backend-choice';
import type { GpuEvent } from '../gpu/context';
import type { FieldError, RunCatalog, RunSpec } from './run-protocol';

export type { GpuEvent };

/** Which compute backend the worker got, with everything the UI shows about it. */
export type BackendReport =
  { kind: 'webgpu'; adapter: AdapterSummary } | { kind: 'cpu'; reason: GpuUnavailableReason };

export interface ProbeRequest {
  /** The page's choice (its `?backend=` URL option; 'auto' without one). */
  backend: BackendChoice;
}

export interface KernelCheckRequest {
  rows: number;
  cols: number;
  seed: number;
}

/** The log-softmax kernel run on this device and compared with its CPU reference. */
export interface KernelCheckResult {
  rows: number;
  cols: number;
  backend: 'webgpu' | 'cpu';
  /** max |GPU − CPU| over all elements; null on the CPU backend, where there is nothing to compare. */
  maxAbsError: number | null;
  /** Wall time of the GPU run including upload and readback; null on the CPU backend. */
  gpuMs: number | null;
  cpuMs: number;
}

export interface LabWorkerApi {
  probeBackend(request: ProbeRequest): Promise<BackendReport>;
  /** Device loss and uncaptured GPU errors; pass the listener through comlink's proxy(). */
  onGpuEvent(listener: (event: GpuEvent) => void): Promise<void>;
  runKernelCheck(request: KernelCheckRequest): Promise<KernelCheckResult>;
  /** The algorithms, environments and tasks a run can use, with every setting's spec. */
  runCatalog(): Promise<RunCatalog>;
  /** Every invalid field of a run spec (empty when valid), before a run worker is started. */
  checkRunSpec(spec: RunSpec): Promise<FieldError[]>;
}
