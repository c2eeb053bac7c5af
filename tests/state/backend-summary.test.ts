import { describe, expect, it } from 'vitest';
import type { AdapterSummary } from '../../src/gpu/adapter-summary';
import { machineSentence, shortBackend, shortRunLine } from '../../src/state/backend-summary';

const adapter = (over: Partial<AdapterSummary>): AdapterSummary => ({
  runtime: 'browser',
  vendor: 'nvidia',
  architecture: 'hopper',
  device: '',
  description: '',
  isFallbackAdapter: false,
  features: [],
  limits: {} as AdapterSummary['limits'],
  ...over,
});

describe('shortBackend', () => {
  it.each([
    ['fallback-adapter', 'CPU — no hardware GPU found'],
    ['no-webgpu-api', 'CPU — this browser has no WebGPU'],
    ['no-adapter', 'CPU — no GPU found'],
    ['cpu-requested', 'CPU — asked for in the address (?backend=cpu)'],
  ] as const)('says %s in a few words', (code, text) => {
    expect(shortBackend({ kind: 'cpu', reason: { code, message: 'long reason' } })).toBe(text);
  });

  it('names a hardware adapter, and a software one as such', () => {
    expect(shortBackend({ kind: 'webgpu', adapter: adapter({}) })).toBe('WebGPU — nvidia hopper');
    expect(
      shortBackend({
        kind: 'webgpu',
        adapter: adapter({
          vendor: 'google',
          architecture: 'swiftshader',
          isFallbackAdapter: true,
        }),
      }),
    ).toBe('WebGPU — google swiftshader (software)');
  });

  it('says when it is still looking or the worker failed', () => {
    expect(shortBackend(undefined)).toBe('Looking for a GPU…');
    expect(shortBackend(undefined, true)).toBe('CPU — the compute worker failed to start');
  });
});

describe('machineSentence', () => {
  it('says plainly whether the GPU or the CPU trains', () => {
    expect(machineSentence({ kind: 'webgpu', adapter: adapter({}) })).toContain('on your GPU');
    expect(
      machineSentence({ kind: 'cpu', reason: { code: 'no-adapter', message: 'x' } }),
    ).toContain('on your CPU');
    expect(
      machineSentence({ kind: 'webgpu', adapter: adapter({ isFallbackAdapter: true }) }),
    ).toContain('no hardware GPU found');
  });
});

describe('shortRunLine', () => {
  it.each([
    [
      'CPU — WebGPU not used: the only adapter is a software fallback: WebGPU — google · swiftshader',
      'CPU — WebGPU not used',
    ],
    ['CPU — requested for this run', 'CPU — requested for this run'],
    [
      'WebGPU — google · swiftshader — fallback adapter — optional features: subgroups · reference on onnxruntime-web (wasm)',
      'WebGPU — google · swiftshader',
    ],
  ])('cuts %j to its head', (line, short) => {
    expect(shortRunLine(line)).toBe(short);
  });
});
