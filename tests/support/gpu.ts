/**
 * GPU acquisition for the GPU test layers (Node + Dawn, and the browser). Without an adapter the
 * calling test file FAILS, unless a developer opted out with ALLOW_NO_GPU=1 outside CI; then it
 * skips with a loud banner. Passing quietly without a GPU is never an option.
 */
import { inject } from 'vitest';
import { acquireGpu, describeAdapter, type GpuContext } from '../../src/gpu';

declare module 'vitest' {
  export interface ProvidedContext {
    gpuRequired: boolean;
  }
}

let acquisition: Promise<GpuContext | undefined> | undefined;

async function acquire(): Promise<GpuContext | undefined> {
  const result = await acquireGpu();
  if (result.ok) {
    console.log(
      `[gpu] running on ${describeAdapter(result.gpu.summary)} (${result.gpu.summary.runtime})`,
    );
    return result.gpu;
  }
  const message = `no WebGPU adapter (${result.reason.code}): ${result.reason.message}`;
  if (inject('gpuRequired')) {
    throw new Error(
      `GPU tests require an adapter, but found ${message}. ` +
        'Outside CI, ALLOW_NO_GPU=1 skips GPU tests instead.',
    );
  }
  const bar = '!'.repeat(78);
  console.warn(`\n${bar}\n[gpu] SKIPPING GPU TESTS (ALLOW_NO_GPU=1): ${message}\n${bar}\n`);
  return undefined;
}

/** The shared test device for this file, or undefined when skipping is allowed. */
export function testGpu(): Promise<GpuContext | undefined> {
  acquisition ??= acquire();
  return acquisition;
}

/**
 * True in the browser layer. Chromium's WebGPU there is the same software driver as Dawn's in
 * Node, so what a browser run adds is its shader compiler and validation: a sweep over sizes or
 * storages whose cases share one pipeline runs one case there (`it.skipIf(IN_BROWSER)` on the
 * rest) and all of them in Node.
 */
export const IN_BROWSER = typeof window !== 'undefined';
