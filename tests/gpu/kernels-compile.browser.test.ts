/**
 * Every kernel the project declares compiles, and its pipeline is created with its default
 * `override` constants, on Chromium's WebGPU: what checks each WGSL file against the browser's own
 * shader compiler. (In Node, Dawn compiles every kernel in its parity tests.) The kernels' numeric
 * parity runs in full in Node, and in the browser for the RL ops, the nn kernels and the LoRA
 * step (vite.config.ts).
 */
import { describe, expect, it } from 'vitest';
import { Kernel } from '../../src/gpu/kernel';
import { testGpu } from '../support/gpu';

type AnyKernel = Kernel<string, string>;

const gpu = await testGpu();

/** Kernels exported by the kernel modules: directly, or as values of an exported record. */
function declaredKernels(): AnyKernel[] {
  const modules = import.meta.glob<Record<string, unknown>>('/src/gpu/kernels/**/*.ts', {
    eager: true,
  });
  const found = new Set<AnyKernel>();
  for (const exports of Object.values(modules)) {
    for (const value of Object.values(exports)) {
      if (value instanceof Kernel) found.add(value);
      else if (value && typeof value === 'object') {
        for (const inner of Object.values(value)) if (inner instanceof Kernel) found.add(inner);
      }
    }
  }
  return [...found].sort((a, b) => a.name.localeCompare(b.name));
}

const KERNELS = declaredKernels();
const WGSL_FILES = import.meta.glob<string>('/kernels/**/*.wgsl', {
  eager: true,
  query: '?raw',
  import: 'default',
});

describe('kernel declarations', () => {
  it('cover every WGSL file in kernels/', () => {
    const files = Object.entries(WGSL_FILES);
    expect(files.length).toBeGreaterThan(40);
    const uncovered = files
      .filter(([, source]) => !KERNELS.some((k) => k.source.includes(source.trim())))
      .map(([path]) => path);
    expect(uncovered).toEqual([]);
  });
});

describe.skipIf(!gpu)('every kernel on this WebGPU', () => {
  it.each(KERNELS.map((k) => [k.name, k] as const))(
    '%s compiles and makes its pipeline',
    async (_name, kernel) => {
      await expect(gpu!.pipelines.get(kernel)).resolves.toBeDefined();
    },
  );
});
