/**
 * The cpu, gpu-node and browser projects share a worker's loaded modules between test files
 * (isolate: false), so a CPU test file that replaces a module with vi.mock must run in the isolated
 * cpu-mocks project: there its mock takes hold even if an earlier file loaded the module, and
 * leaks into no later file. vite.config.ts lists those files by hand; this keeps the list whole
 * and exact, and keeps mocks out of the GPU and browser files.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

/** Every .ts file under `dir`, as repository paths. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The Vitest test files that call vi.mock or vi.doMock. */
function filesThatMock(): string[] {
  return tsFiles('tests')
    .filter((path) => path.endsWith('.test.ts') && !path.startsWith('tests/e2e/'))
    .filter((path) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(path, 'utf8')))
    .sort();
}

const isGpuTest = (path: string) => path.endsWith('.gpu.test.ts');
const isBrowserTest = (path: string) => path.endsWith('.browser.test.ts');

/** The paths in vite.config.ts's `mockingTests` list. */
function listedInConfig(): string[] {
  const config = readFileSync('vite.config.ts', 'utf8');
  const list = /const mockingTests = \[([^\]]*)\]/.exec(config);
  expect(list, 'vite.config.ts has a mockingTests list').not.toBeNull();
  return [...list![1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!).sort();
}

it('every CPU test file that mocks a module runs isolated, and only those', () => {
  const mocking = filesThatMock().filter((path) => !isGpuTest(path) && !isBrowserTest(path));
  expect(mocking.length).toBeGreaterThan(0);
  expect(listedInConfig()).toEqual(mocking);
});

it('no GPU or browser test file mocks a module: those projects have no isolated twin', () => {
  expect(filesThatMock().filter((path) => isGpuTest(path) || isBrowserTest(path))).toEqual([]);
});
