/**
 * The cpu project shares a worker's loaded modules between test files (isolate: false), so a
 * file that replaces a module with vi.mock must run in the isolated cpu-mocks project: there its
 * mock takes hold even if an earlier file loaded the module, and leaks into no later file.
 * vite.config.ts lists those files by hand; this keeps the list whole and exact.
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

/** The CPU-layer test files (not GPU, browser or e2e) that call vi.mock or vi.doMock. */
function filesThatMock(): string[] {
  return tsFiles('tests')
    .filter((path) => path.endsWith('.test.ts') && !/\.(gpu|browser)\.test\.ts$/.test(path))
    .filter((path) => !path.startsWith('tests/e2e/'))
    .filter((path) => /\bvi\.(do)?[mM]ock\(/.test(readFileSync(path, 'utf8')))
    .sort();
}

/** The paths in vite.config.ts's `mockingTests` list. */
function listedInConfig(): string[] {
  const config = readFileSync('vite.config.ts', 'utf8');
  const list = /const mockingTests = \[([^\]]*)\]/.exec(config);
  expect(list, 'vite.config.ts has a mockingTests list').not.toBeNull();
  return [...list![1]!.matchAll(/'([^']+)'/g)].map((m) => m[1]!).sort();
}

it('every CPU test file that mocks a module runs isolated, and only those', () => {
  const mocking = filesThatMock();
  expect(mocking.length).toBeGreaterThan(0);
  expect(listedInConfig()).toEqual(mocking);
});
