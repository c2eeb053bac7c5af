/**
 * The LoRA training plan (src/models/hf/lora-train-plan.ts) counts what a training pass actually
 * asks the GPU for: the f32 buffers a LlamaLoraPass requests, on the tiny Llama (every projection
 * adapted) and Qwen3 (per-head norms, two projections adapted) fixtures, equal the plan's kept
 * activations, backward scratch and logits. Runs in Node (Dawn) and Chromium.
 */
import { describe, expect, it, vi } from 'vitest';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { uploadLlamaLora } from '../../../src/models/hf/llama-gpu-lora';
import { LlamaLoraPass } from '../../../src/models/hf/llama-gpu-train';
import { llamaGpuWeightsFromCpu } from '../../../src/models/hf/llama-gpu-weights';
import { createLlamaLora, resolveLoraTargets } from '../../../src/models/hf/llama-lora';
import { loraPassFloats } from '../../../src/models/hf/lora-train-plan';
import { testGpu } from '../../support/gpu';
import { loadBrowserFixture } from '../../support/hf-fixture-browser';

const gpu = await testGpu();

describe.skipIf(!gpu)('the LoRA training plan against a pass’s buffers', () => {
  const device = gpu!;
  it.each([
    ['llama-tiny', 'all-linear', 3, 7],
    ['qwen3-tiny', ['v_proj', 'down_proj'], 2, 5],
  ] as const)('%s, %j, B = %i, T = %i', async (family, targets, B, T) => {
    const fixture = await loadBrowserFixture(family);
    const settings = { rank: 4, alpha: 8, targets: resolveLoraTargets(targets) };
    const weights = llamaGpuWeightsFromCpu(
      device,
      llamaModelFromWeights(fixture.spec, fixture.weights),
      'f32',
    );
    const adapters = uploadLlamaLora(
      device,
      fixture.spec,
      createLlamaLora(fixture.spec, settings, 1),
    );
    const storage = vi.spyOn(device, 'storage');
    const upload = vi.spyOn(device, 'upload');
    const pass = new LlamaLoraPass(device, weights, adapters, B, T);
    const requested =
      storage.mock.calls.reduce((a, [bytes]) => a + bytes, 0) +
      upload.mock.calls.reduce((a, [data]) => a + data.byteLength, 0);
    storage.mockRestore();
    upload.mockRestore();
    pass.release();
    adapters.release();
    weights.release();
    const floats = loraPassFloats(fixture.spec, settings, B, T);
    const count = (rows: [string, number][]) => rows.reduce((a, [, n]) => a + n, 0);
    const planned = count(floats.kept) + count(floats.scratch) + floats.logits[0]![1];
    expect(requested).toBe(planned * 4);
  });
});
