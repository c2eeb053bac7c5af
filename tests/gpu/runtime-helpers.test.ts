/** Pure helpers of the GPU runtime; no GPU needed. */
import { describe, expect, it } from 'vitest';
import { describeAdapter, describeUnavailable, workgroupGrid } from '../../src/gpu';
import type { AdapterSummary } from '../../src/gpu';
import { alignedSize } from '../../src/gpu/buffer-pool';
import { defaultLogSoftmaxWorkgroupSize } from '../../src/gpu/kernels/log-softmax';

const summary: AdapterSummary = {
  runtime: 'browser',
  vendor: 'acme',
  architecture: 'rdna-9',
  device: '',
  description: 'ACME GPU',
  isFallbackAdapter: false,
  features: ['timestamp-query', 'shader-f16'],
  limits: {
    maxStorageBufferBindingSize: 2 ** 27,
    maxBufferSize: 2 ** 28,
    maxComputeWorkgroupStorageSize: 16384,
    maxComputeInvocationsPerWorkgroup: 256,
    maxComputeWorkgroupSizeX: 256,
    maxComputeWorkgroupsPerDimension: 65535,
    maxStorageBuffersPerShaderStage: 8,
  },
};

describe('workgroupGrid', () => {
  it.each([
    [1, 65535, [1, 1]],
    [65535, 65535, [65535, 1]],
    [65536, 65535, [32768, 2]],
    [200_000, 65535, [50000, 4]],
    [0, 65535, [1, 1]],
  ])('%i workgroups with a limit of %i → %o', (count, limit, grid) => {
    const [x, y] = workgroupGrid(count, limit);
    expect([x, y]).toEqual(grid);
    expect(x).toBeLessThanOrEqual(limit);
    expect(x * y).toBeGreaterThanOrEqual(count);
  });
});

describe('alignedSize', () => {
  it.each([
    [1, 256],
    [256, 256],
    [257, 512],
    [4096 * 4, 16384],
  ])('%i bytes → %i', (bytes, size) => expect(alignedSize(bytes)).toBe(size));
});

describe('backend descriptions', () => {
  it('names vendor, architecture, fallback status and features', () => {
    expect(describeAdapter(summary)).toBe(
      'WebGPU — acme · rdna-9 — not a fallback adapter — optional features: timestamp-query, shader-f16',
    );
    expect(describeAdapter({ ...summary, isFallbackAdapter: true, features: [] })).toContain(
      '— fallback adapter — optional features: none',
    );
  });

  it('says CPU and why', () => {
    expect(describeUnavailable({ code: 'no-adapter', message: 'no GPU' })).toBe(
      'CPU — WebGPU unavailable: no GPU',
    );
    expect(describeUnavailable({ code: 'cpu-requested', message: 'asked for' })).toBe(
      'CPU — WebGPU not used: asked for',
    );
  });
});

describe('defaultLogSoftmaxWorkgroupSize', () => {
  it('uses few threads on software adapters and more for wide rows on hardware', () => {
    expect(defaultLogSoftmaxWorkgroupSize({ ...summary, isFallbackAdapter: true }, 32768)).toBe(32);
    expect(defaultLogSoftmaxWorkgroupSize(summary, 64)).toBe(64);
    expect(defaultLogSoftmaxWorkgroupSize(summary, 1000)).toBe(128);
    expect(defaultLogSoftmaxWorkgroupSize(summary, 32768)).toBe(256);
  });
});
