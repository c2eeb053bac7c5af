/**
 * Waiting for an environment to go idle. `sampleCpuSeconds` returns the CPU time used so far by
 * the environment's own processes (all threads); the wait ends after two consecutive windows
 * below `maxCores`, or at `limitMs`.
 */
import type { SettleResult } from './types';

const WINDOW_MS = 500;

export async function settle(
  sampleCpuSeconds: () => Promise<number>,
  { maxCores = 0.15, limitMs = 150_000 } = {},
): Promise<SettleResult> {
  const start = performance.now();
  let quietWindows = 0;
  let lastCores = 0;
  while (performance.now() - start < limitMs) {
    const cpu0 = await sampleCpuSeconds();
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const cpu1 = await sampleCpuSeconds();
    lastCores = (cpu1 - cpu0) / ((performance.now() - t0) / 1000);
    quietWindows = lastCores < maxCores ? quietWindows + 1 : 0;
    if (quietWindows >= 2) return { waitedMs: performance.now() - start, quiet: true, lastCores };
  }
  return { waitedMs: performance.now() - start, quiet: false, lastCores };
}
