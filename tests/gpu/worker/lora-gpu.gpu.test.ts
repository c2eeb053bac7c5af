/**
 * The LoRA worker's GPU model (src/worker/lora-gpu.ts): from the page's f32 weights it opens its
 * own device and trains on the base stored as f16 — scoring as the CPU model does on the weights
 * rounded to f16 — and a step too large for the run's budget runs in micro-batches. Runs in Node (Dawn) and Chromium.
 */
import { describe, expect, it } from 'vitest';
import { hfBaseGroup } from '../../../src/models/hf/hf-weights';
import { LlamaCpuLanguageModel } from '../../../src/models/hf/llama-lm-cpu';
import { createLlamaLora, LORA_MODULES } from '../../../src/models/hf/llama-lora';
import { roundToF16 } from '../../../src/util/half-float';
import { loraGpuPolicy } from '../../../src/worker/lora-gpu';
import type { LoraRunRequest } from '../../../src/worker/lora-protocol';
import { testGpu } from '../../support/gpu';
import { loadBrowserFixture } from '../../support/hf-fixture-browser';

const gpu = await testGpu();

describe.skipIf(!gpu)('the LoRA worker’s GPU model', () => {
  async function request(promptsPerUpdate: number) {
    const fixture = await loadBrowserFixture('llama-tiny');
    const { layout } = hfBaseGroup(fixture.spec, 'f32');
    const base = new Float32Array(layout.total);
    for (const e of layout.entries) layout.view(base, e.name).set(fixture.weights.get(e.name)!);
    const lora = { rank: 4, alpha: 8, targets: [...LORA_MODULES] };
    const run = { spec: fixture.spec, base, promptsPerUpdate, groupSize: 8 } as LoraRunRequest;
    return { run, lora, fixture, base };
  }

  it('scores with f16 storage as the CPU model on f16-rounded weights', async () => {
    const { run, lora, base, fixture } = await request(2);
    const { policy, device } = await loraGpuPolicy(run, lora, 8);
    expect(device).toMatch(/WebGPU/);
    const adapters = createLlamaLora(fixture.spec, lora, 3);
    adapters.params.forEach((_, i, p) => (p[i] = Math.sin(i) * 0.1));
    const onGpu = policy(adapters);
    const onCpu = new LlamaCpuLanguageModel(fixture.spec, roundToF16(base), adapters);
    const tokens = Int32Array.of(1, 7, 3, 10, 0, 5);
    const targets = Int32Array.of(7, 3, 10, 0, 5, 2);
    const a = await onGpu.scoreTokens(tokens, targets, 1, 6, 1);
    const b = await onCpu.scoreTokens(tokens, targets, 1, 6, 1);
    for (let i = 0; i < 6; i++) expect(Math.abs(a.logp[i]! - b.logp[i]!)).toBeLessThan(1e-4);
    onGpu.dispose();
  });

  it('runs a step too large for the run’s budget in micro-batches, and says so', async () => {
    const { run, lora } = await request(4096);
    const { policy, device } = await loraGpuPolicy(run, lora, 64);
    const batch = /, (\d+) answers at a time$/.exec(device);
    expect(batch).not.toBeNull();
    expect(Number(batch![1])).toBeLessThan(4096 * 8);
    expect(typeof policy).toBe('function');
  });
});
