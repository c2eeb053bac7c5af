/**
 * The GPU layers must fail, not pass, when no adapter exists in CI. This runs the Node GPU layer in
 * a child process with the Vulkan driver list pointed at nothing, and checks both modes.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function runGpuLayerWithoutDriver(extraEnv: Record<string, string>) {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    VK_ICD_FILENAMES: '/nonexistent/no_driver.json',
  };
  delete env.CI;
  delete env.ALLOW_NO_GPU;
  delete env.VITEST;
  delete env.VITEST_POOL_ID;
  delete env.VITEST_WORKER_ID;
  const result = spawnSync(
    'npx',
    ['vitest', 'run', '--project', 'gpu-node', 'tests/gpu/runtime.gpu.test.ts'],
    { env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 120_000 },
  );
  return { code: result.status, output: `${result.stdout}\n${result.stderr}` };
}

describe('GPU test layer without an adapter', () => {
  it('fails in CI mode, naming the reason', () => {
    const { code, output } = runGpuLayerWithoutDriver({ CI: 'true', ALLOW_NO_GPU: '1' });
    expect(code).not.toBe(0);
    expect(output).toContain('GPU tests require an adapter');
    expect(output).toContain('no-adapter');
  }, 120_000);

  it('skips loudly when a developer opts out outside CI', () => {
    const { code, output } = runGpuLayerWithoutDriver({ ALLOW_NO_GPU: '1' });
    expect(code).toBe(0);
    expect(output).toContain('SKIPPING GPU TESTS (ALLOW_NO_GPU=1)');
    expect(output).toMatch(/skipped/);
  }, 120_000);
});
