/**
 * Which compute backend a run asks for, and the one rule every caller shares: `auto` passes over
 * a fallback adapter. A fallback adapter is a software one (SwiftShader, WARP) that a browser or
 * Dawn offers when there is no usable GPU; for the lab's small models it is several times slower
 * than our CPU path (bench suite policy-step: 562 against 3,974 tokens/s on a 2-core machine), so
 * `auto` trains on the CPU there and says so. `webgpu` takes any adapter, a fallback one too.
 */
import type { GpuUnavailableReason } from './adapter-summary';
import { describeAdapter } from './adapter-summary';
import { type AcquireOptions, acquireGpu, type GpuAcquisition } from './context';

export type BackendChoice = 'auto' | 'webgpu' | 'cpu';

export const BACKEND_CHOICES: readonly BackendChoice[] = ['auto', 'webgpu', 'cpu'];

/**
 * A WebGPU device for `choice` ('auto' or 'webgpu'), or why there is none. With 'auto' a fallback
 * adapter is released again and reported as the reason; `howToForce` names what takes it anyway
 * (the URL's ?backend=webgpu, the CLI's --backend=webgpu).
 */
export async function acquireForChoice(
  choice: Exclude<BackendChoice, 'cpu'>,
  howToForce: string,
  options: AcquireOptions = {},
): Promise<GpuAcquisition> {
  const found = await acquireGpu(options);
  if (!found.ok || choice === 'webgpu' || !found.gpu.summary.isFallbackAdapter) return found;
  const reason: GpuUnavailableReason = {
    code: 'fallback-adapter',
    message: `the only adapter is a software fallback, slower than the CPU for these models (${howToForce} uses it): ${describeAdapter(found.gpu.summary)}`,
  };
  found.gpu.destroy();
  return { ok: false, reason };
}
