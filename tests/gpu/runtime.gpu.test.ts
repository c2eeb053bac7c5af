/** The GPU runtime itself: adapter report, buffer pool, pipeline cache, timing, readback, loss. */
import { describe, expect, it } from 'vitest';
import {
  KernelError,
  OPTIONAL_FEATURES,
  acquireGpu,
  defineKernel,
  logSoftmaxGpu,
  logSoftmaxKernel,
  timeBatch,
  encodeLogSoftmax,
} from '../../src/gpu';
import { testGpu } from '../support/gpu';
import { randomLogits } from '../support/random';

const gpu = await testGpu();

describe.skipIf(!gpu)('GPU runtime', () => {
  const device = gpu!;

  it('reports the adapter it runs on', () => {
    const { summary } = device;
    expect(['browser', 'node-dawn']).toContain(summary.runtime);
    expect(summary.vendor.length + summary.architecture.length).toBeGreaterThan(0);
    expect(typeof summary.isFallbackAdapter).toBe('boolean');
    for (const feature of summary.features) expect(OPTIONAL_FEATURES).toContain(feature);
    expect(summary.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(256);
    expect(summary.limits.maxStorageBufferBindingSize).toBeGreaterThanOrEqual(128 * 2 ** 20);
  });

  it('reads back what it uploads', async () => {
    const data = new Float32Array([1.5, -2, 3.25, 1e-30, 6e30]);
    const buffer = device.upload(data);
    expect(Array.from(await device.readF32(buffer, data.length))).toEqual(Array.from(data));
    device.pool.release(buffer);
  });

  it('allocates no new buffers when the same shapes repeat (pool stays flat)', async () => {
    const logits = randomLogits(8 * 100, 3, 1);
    await logSoftmaxGpu(device, logits, 8, 100);
    const after = device.pool.stats();
    for (let i = 0; i < 25; i++) await logSoftmaxGpu(device, logits, 8, 100);
    const later = device.pool.stats();
    expect(later.created).toBe(after.created);
    expect(later.inUse).toBe(after.inUse);
  });

  it('caches pipelines by kernel and override constants', async () => {
    const before = device.pipelines.stats();
    const a = await device.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: 128 });
    const b = await device.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: 128 });
    const c = await device.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: 64 });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    const after = device.pipelines.stats();
    expect(after.hits - before.hits).toBeGreaterThanOrEqual(1);
    await expect(device.pipelines.get(logSoftmaxKernel, { NOT_AN_OVERRIDE: 1 })).rejects.toThrow(
      /unknown override constant "NOT_AN_OVERRIDE"/,
    );
  });

  it('turns WGSL compile errors into a KernelError with the compiler message', async () => {
    const broken = defineKernel({
      name: 'broken',
      source: `struct Params { n: u32 }
        @group(0) @binding(0) var<uniform> params: Params;
        @group(0) @binding(1) var<storage, read_write> out: array<f32>;
        @compute @workgroup_size(1) fn main() { out[0] = undefined_symbol; }`,
      uniforms: [{ name: 'n', type: 'u32' }],
      storage: [{ name: 'out', access: 'read_write' }],
    });
    await expect(device.pipelines.get(broken)).rejects.toThrow(KernelError);
    await expect(device.pipelines.get(broken)).rejects.toThrow(/undefined_symbol/);
  });

  it('times a pass with timestamp queries where present, else wall clock', async () => {
    const rows = 64;
    const cols = 4096;
    const input = device.upload(randomLogits(rows * cols, 5, 2));
    const out = device.storage(rows * cols * 4);
    // Pipelines first: encoding happens synchronously inside timeBatch.
    const warm = device.beginBatch('warm');
    await encodeLogSoftmax(device, warm, { logits: input, out }, rows, cols);
    warm.submit();
    const pipeline = await device.pipelines.get(logSoftmaxKernel, { WORKGROUP_SIZE: 256 });
    const timing = await timeBatch(device, 'timed', (batch) =>
      batch.dispatch(logSoftmaxKernel, {
        pipeline,
        buffers: { logits: input, out },
        uniforms: { rows, cols },
        workgroups: [rows],
      }),
    );
    expect(timing.ms).toBeGreaterThan(0);
    expect(timing.wallMs).toBeGreaterThan(0);
    expect(timing.method).toBe(device.has('timestamp-query') ? timing.method : 'wall-clock');
    device.pool.release(input);
    device.pool.release(out);
  });

  it('reports device loss to subscribers with the reason', async () => {
    // A separate device: losing the shared one would break the other tests.
    const result = await acquireGpu();
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const lost = new Promise((resolve) => result.gpu.onEvent(resolve));
    result.gpu.destroy();
    await expect(lost).resolves.toMatchObject({ type: 'device-lost', reason: 'destroyed' });
    expect(result.gpu.isLost).toBe(true);
  });
});
