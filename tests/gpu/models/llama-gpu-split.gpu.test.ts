/**
 * Matrices larger than one buffer binding are split by rows (src/models/hf/llama-gpu-weights.ts):
 * Qwen2.5-0.5B's 151,936 × 896 embedding is 272 MB as f16, over WebGPU's default 128 MiB binding.
 * The tiny fixtures take the same path when the loader is told a part may hold only 4 kB: every
 * matrix then splits (the embedding into 12–24 parts, q_proj with Qwen2's bias into 2–4, the
 * untied LM head of qwen2-tiny too), and the model must score, generate and train as unsplit.
 * Runs in Node (Dawn) and Chromium.
 *
 * The forward does the same arithmetic part by part, so scores and tokens are compared exactly;
 * the backward through a split matrix adds the parts' shares in another order (relative 1e-5).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { llamaScoreGpu } from '../../../src/models/hf/llama-gpu';
import { llamaGenerateGpu } from '../../../src/models/hf/llama-gpu-generate';
import { uploadLlamaLora } from '../../../src/models/hf/llama-gpu-lora';
import { llamaLoraGradientsGpu } from '../../../src/models/hf/llama-gpu-train';
import {
  type GpuWeightStorage,
  type LlamaGpuWeights,
  llamaGpuWeightsFromCpu,
} from '../../../src/models/hf/llama-gpu-weights';
import { ALL_LINEAR, createLlamaLora, resolveLoraTargets } from '../../../src/models/hf/llama-lora';
import { planMemory } from '../../../src/models/hf/memory-plan';
import { IN_BROWSER, testGpu } from '../../support/gpu';
import { maxAbsDiff } from '../../support/expect-close';
import { loadBrowserFixture } from '../../support/hf-fixture-browser';

const gpu = await testGpu();
const PART_BYTES = 4096;
// The browser layer runs f16 storage (the loader's default) only: f32 takes the same split paths.
const STORAGES = IN_BROWSER ? (['f16'] as const) : (['f32', 'f16'] as const);
const measured: Record<string, number> = {};

describe.skipIf(!gpu).each(['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'])(
  'GPU Llama %s with its matrices split by rows',
  (name) => {
    const device = gpu!;

    async function both(storage: GpuWeightStorage) {
      const fixture = await loadBrowserFixture(name);
      const cpu = llamaModelFromWeights(fixture.spec, fixture.weights);
      const whole = llamaGpuWeightsFromCpu(device, cpu, storage);
      const split = llamaGpuWeightsFromCpu(device, cpu, storage, { maxPartBytes: PART_BYTES });
      return { fixture, whole, split, release: () => [whole, split].forEach((w) => w.release()) };
    }

    it.each(STORAGES)(
      'splits as the memory plan counts, and scores bit for bit as unsplit (%s)',
      async (storage) => {
        const { fixture, whole, split, release } = await both(storage);
        try {
          const { spec } = fixture;
          const plan = planMemory(spec, {
            storage,
            batch: 1,
            context: 8,
            limits: { maxBufferSize: 1 << 30, maxStorageBufferBindingSize: PART_BYTES },
          });
          const byName = new Map(plan.splits.map((s) => [s.name, s]));
          const embed = byName.get('model.embed_tokens.weight')!;
          expect(split.embed.parts.length).toBe(embed.parts);
          expect(split.embed.parts.length).toBeGreaterThan(4);
          expect(split.embed.parts.map((p) => p.rowStart)).toEqual(
            split.embed.parts.map((_, i) => i * embed.rowsPerPart),
          );
          const q = split.layers[0]!.q.w;
          expect(q.parts.length).toBe(byName.get('model.layers.0.self_attn.q_proj.weight')!.parts);
          expect(whole.embed.parts.length).toBe(1);
          expect(split.bytes).toBe(whole.bytes);

          for (const { ids } of [...fixture.golden.sequences, fixture.golden.long_sequence]) {
            if (ids.length < 2) continue;
            const input = Int32Array.from(ids);
            const a = await llamaScoreGpu(device, whole, input, 1, ids.length);
            const b = await llamaScoreGpu(device, split, input, 1, ids.length);
            expect(Array.from(b)).toEqual(Array.from(a));
          }
        } finally {
          release();
        }
      },
    );

    it.runIf(name === 'llama-tiny')(
      'refuses a part size that is not a whole number of bytes',
      async () => {
        const fixture = await loadBrowserFixture(name);
        const cpu = llamaModelFromWeights(fixture.spec, fixture.weights);
        for (const bad of [Number.NaN, 0, 100.5]) {
          expect(() => llamaGpuWeightsFromCpu(device, cpu, 'f16', { maxPartBytes: bad })).toThrow(
            /llamaGpuWeights: maxPartBytes must be an integer in \[4, /,
          );
        }
      },
    );

    // Once, for the family with the most split matrices (an untied LM head, q/k/v biases).
    it.runIf(name === 'qwen2-tiny')(
      'generates the same tokens with the KV cache (f16)',
      async () => {
        const { fixture, whole, split, release } = await both('f16');
        try {
          const base = fixture.golden.long_sequence.ids;
          const prompts = [base.slice(0, 5), base.slice(10, 17)].map((p) => Int32Array.from(p));
          const options = { maxNewTokens: 10, temperature: 0.9, topK: 40, seed: 5 };
          const a = await llamaGenerateGpu(device, whole, prompts, options);
          const b = await llamaGenerateGpu(device, split, prompts, options);
          expect(b.tokens.map((t) => Array.from(t))).toEqual(a.tokens.map((t) => Array.from(t)));
          expect(b.logprobs.map((l) => Array.from(l))).toEqual(
            a.logprobs.map((l) => Array.from(l)),
          );
        } finally {
          release();
        }
      },
    );

    it.each(STORAGES)(
      'trains LoRA through the split LM head and projections as unsplit (%s)',
      async (storage) => {
        const { fixture, whole, split, release } = await both(storage);
        const { spec } = fixture;
        const lora = createLlamaLora(
          spec,
          { rank: 4, alpha: 8, targets: resolveLoraTargets(ALL_LINEAR) },
          3,
        );
        lora.params.set(lora.params.map((_, i) => 0.2 * Math.sin(i * 0.37)));
        const [B, T] = [2, 6];
        const ids = Int32Array.from({ length: B * T }, (_, i) => (i * 53 + 7) % spec.vocab);
        const dLogits = Float32Array.from(
          { length: B * T * spec.vocab },
          (_, i) => Math.sin(i * 0.11) * 0.1,
        );
        const onGpu = uploadLlamaLora(device, spec, lora);
        try {
          const run = (weights: LlamaGpuWeights) =>
            llamaLoraGradientsGpu(device, weights, onGpu, ids, { batch: B, seq: T }, dLogits);
          const a = await run(whole);
          const b = await run(split);
          expect(Array.from(b.logits)).toEqual(Array.from(a.logits));
          let scale = 0;
          for (const g of a.grads) scale = Math.max(scale, Math.abs(g));
          expect(scale).toBeGreaterThan(1e-3);
          const rel = maxAbsDiff(b.grads, a.grads) / scale;
          measured[`${name} ${storage}`] = rel;
          expect(rel).toBeLessThan(1e-5);
        } finally {
          onGpu.release();
          release();
        }
      },
    );
  },
);

afterAll(() => {
  if (Object.keys(measured).length > 0) {
    console.log('[llama-gpu-split] LoRA gradients, split vs whole (rel.):', measured);
  }
});
