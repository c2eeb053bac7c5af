/** The backend asked for in the page's URL (location.search, not the hash). */

/**
 * Whether the page was opened with `?backend=cpu`: the backend probe, the lab's new runs and the
 * lessons' runs then all train on the CPU, even where WebGPU is available.
 */
export function cpuRequested(): boolean {
  return new URLSearchParams(location.search).get('backend') === 'cpu';
}
