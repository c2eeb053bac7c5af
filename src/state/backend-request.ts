/** The backend asked for in the page's URL (location.search, not the hash). */
import type { BackendChoice } from '../gpu/backend-choice';

/**
 * `?backend=cpu`: the backend probe, the lab's new runs and the lessons' runs all train on the CPU,
 * even where WebGPU is available. `?backend=webgpu`: they take any WebGPU adapter, a software
 * fallback one too (which 'auto', the default, passes over for the CPU).
 */
export function requestedBackend(): BackendChoice {
  const value = new URLSearchParams(location.search).get('backend');
  return value === 'cpu' || value === 'webgpu' ? value : 'auto';
}
