/**
 * The LoRA training pass on the GPU (llama-gpu-train.ts: the forward with kept activations and the
 * backward to the adapters' gradients, base frozen) against its CPU twin (llamaForward with
 * adapters, llamaLoraBackward) on the three tiny fixture families — Llama (tied), Qwen2 (q/k/v
 * biases), Qwen3 (per-head q/k norms) — for B = 2 sequences, every projection adapted, B given
 * values so that every path carries gradient. Runs in Node (Dawn) and Chromium.
 *
 * - f32 storage: logits within 5e-5, each gradient within 2e-4 of the largest (f32 sums in
 *   another order);
 * - f16 storage: against the CPU on the weights rounded to f16 (what the GPU holds), same bounds;
 * - adapters on two modules only: the gradients of exactly those tensors;
 * - the gradients are far from zero and move with dLogits, so a backward that skipped a path fails.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { llamaForward } from '../../../src/models/hf/llama-cpu';
import { llamaLoraBackward } from '../../../src/models/hf/llama-cpu-backward';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { uploadLlamaLora } from '../../../src/models/hf/llama-gpu-lora';
import { llamaLoraGradientsGpu } from '../../../src/models/hf/llama-gpu-train';
import {
  type GpuWeightStorage,
  llamaGpuWeightsFromCpu,
} from '../../../src/models/hf/llama-gpu-weights';
import {
  ALL_LINEAR,
  type LoraSettings,
  createLlamaLora,
  resolveLoraTargets,
} from '../../../src/models/hf/llama-lora';
import type { ModelSpec } from '../../../src/models/model-spec';
import { roundToF16 } from '../../../src/util/half-float';
import { testGpu } from '../../support/gpu';
import { loadBrowserFixture } from '../../support/hf-fixture-browser';
import { maxAbsDiff } from '../../support/expect-close';

const gpu = await testGpu();
const FAMILIES = ['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'] as const;
const B = 2;
const T = 6;

/** Deterministic values in (−1, 1). */
const wave = (n: number, phase: number) =>
  Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.731 + phase) * Math.cos(i * 0.117));

function adapters(spec: ModelSpec, settings: LoraSettings) {
  const lora = createLlamaLora(spec, settings, 3);
  // PEFT's B = 0 would leave no gradient for A: give every tensor values.
  lora.params.set(wave(lora.params.length, 0.4).map((x) => 0.3 * x));
  return lora;
}

const ids = (vocab: number) => Int32Array.from({ length: B * T }, (_, i) => (i * 37 + 11) % vocab);

function maxAbs(a: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]!));
  return m;
}

const measured: Record<string, number> = {};

describe.skipIf(!gpu)('LoRA training pass on the GPU against the CPU twin', () => {
  const device = gpu!;

  async function compare(
    family: (typeof FAMILIES)[number],
    storage: GpuWeightStorage,
    settings: LoraSettings,
  ) {
    const fixture = await loadBrowserFixture(family);
    const { spec } = fixture;
    const cpuWeights =
      storage === 'f16'
        ? new Map([...fixture.weights].map(([k, w]) => [k, roundToF16(w)]))
        : fixture.weights;
    const cpu = llamaModelFromWeights(spec, cpuWeights);
    const lora = adapters(spec, settings);
    const input = ids(spec.vocab);
    const dLogits = wave(B * T * spec.vocab, 1.3);
    const forward = llamaForward(cpu, input, B, T, { lora });
    const want = llamaLoraBackward(cpu, forward, dLogits);

    const weights = llamaGpuWeightsFromCpu(
      device,
      llamaModelFromWeights(spec, fixture.weights),
      storage,
    );
    const onGpu = uploadLlamaLora(device, spec, lora);
    try {
      const got = await llamaLoraGradientsGpu(
        device,
        weights,
        onGpu,
        input,
        { batch: B, seq: T },
        dLogits,
      );
      return { lora, forward, want, got };
    } finally {
      onGpu.release();
      weights.release();
    }
  }

  for (const family of FAMILIES) {
    for (const storage of ['f32', 'f16'] as const) {
      it(`${family}, ${storage} storage: logits and every adapter gradient`, async () => {
        const settings = { rank: 4, alpha: 8, targets: resolveLoraTargets(ALL_LINEAR) };
        const { lora, forward, want, got } = await compare(family, storage, settings);
        const logitsDiff = maxAbsDiff(got.logits, forward.logits);
        expect(logitsDiff).toBeLessThan(5e-5);
        const scale = maxAbs(want.grads);
        // Every path carries gradient: the largest is far from zero.
        expect(scale).toBeGreaterThan(1e-2);
        let worst = 0;
        for (const entry of lora.group.layout.entries) {
          const w = want.byName.get(entry.name)!;
          const g = lora.group.layout.view(got.grads, entry.name);
          expect(maxAbs(w), entry.name).toBeGreaterThan(0);
          const diff = maxAbsDiff(g, w) / scale;
          worst = Math.max(worst, diff);
          expect(diff, entry.name).toBeLessThan(2e-4);
        }
        measured[`${family} ${storage} grads (rel.)`] = worst;
        measured[`${family} ${storage} logits`] = logitsDiff;
      });
    }
  }

  it('adapters on two modules only: the gradients of exactly those tensors', async () => {
    const settings = { rank: 2, alpha: 3, targets: resolveLoraTargets(['v_proj', 'up_proj']) };
    const { lora, want, got } = await compare('qwen2-tiny', 'f32', settings);
    const names = lora.group.layout.entries.map((e) => e.name);
    expect(names.every((n) => /v_proj|up_proj/.test(n))).toBe(true);
    expect(got.grads.length).toBe(lora.group.layout.total);
    expect(maxAbsDiff(got.grads, want.grads) / maxAbs(want.grads)).toBeLessThan(2e-4);
  });
});

afterAll(() => {
  if (Object.keys(measured).length > 0) console.log('[llama-gpu-train] worst |Δ|:', measured);
});
