/**
 * What the lab tells a user about the compute backend it got. Plain data: it crosses the worker
 * boundary and is rendered by the UI.
 */

/** Optional WebGPU features the runtime enables when the adapter has them. */
export const OPTIONAL_FEATURES = ['timestamp-query', 'subgroups', 'shader-f16'] as const;
export type OptionalFeature = (typeof OPTIONAL_FEATURES)[number];

/** Limits kernels size themselves against. Requested at the adapter's maximum when asked. */
export const TRACKED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupsPerDimension',
  'maxStorageBuffersPerShaderStage',
] as const;
export type TrackedLimit = (typeof TRACKED_LIMITS)[number];

export interface AdapterSummary {
  /** Where the WebGPU implementation lives: the browser's own, or Dawn loaded by Node. */
  runtime: 'browser' | 'node-dawn';
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  /** A fallback adapter is a software or otherwise slow implementation (spec: isFallbackAdapter). */
  isFallbackAdapter: boolean;
  /** Optional features enabled on the device (a subset of OPTIONAL_FEATURES). */
  features: OptionalFeature[];
  limits: Record<TrackedLimit, number>;
}

/** Why the lab runs on the CPU. `code` is stable for tests and UI; `message` is for people. */
export type GpuUnavailableReason =
  | { code: 'no-webgpu-api'; message: string }
  | { code: 'node-binding-failed'; message: string }
  | { code: 'no-adapter'; message: string }
  | { code: 'device-request-failed'; message: string }
  | { code: 'cpu-requested'; message: string }
  /** 'auto' passed over a software fallback adapter (src/gpu/backend-choice.ts). */
  | { code: 'fallback-adapter'; message: string };

/** One line for a status bar, e.g. "WebGPU · google swiftshader (swiftshader) · ...". */
export function describeAdapter(summary: AdapterSummary): string {
  const name = [summary.vendor || 'unknown vendor', summary.architecture || summary.device]
    .filter(Boolean)
    .join(' · ');
  const fallback = summary.isFallbackAdapter ? 'fallback adapter' : 'not a fallback adapter';
  const features = summary.features.length > 0 ? summary.features.join(', ') : 'none';
  return `WebGPU — ${name} — ${fallback} — optional features: ${features}`;
}

export function describeUnavailable(reason: GpuUnavailableReason): string {
  const chosen = reason.code === 'cpu-requested' || reason.code === 'fallback-adapter';
  const why = chosen ? 'WebGPU not used' : 'WebGPU unavailable';
  return `CPU — ${why}: ${reason.message}`;
}
