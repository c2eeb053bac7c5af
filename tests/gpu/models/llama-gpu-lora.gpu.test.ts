/**
 * The Llama GPU forward with PEFT adapters (llama-gpu-lora.ts, recordLinear's LoRA update) on the
 * llama-tiny-lora fixture (r = 4, alpha = 8, all seven projections; written by the independent
 * float64 reference from PEFT's layout). Runs in Node (Dawn) and Chromium.
 *
 * - f32 base storage: log-probs with the adapter against the reference's golden values, and with
 *   the adapters switched off against its base log-probs, within 5e-5 (the f32 tolerance of
 *   llama-gpu.gpu.test.ts: the GPU sums in f32);
 * - f16 base storage: the reference has no f16 values with the adapter, so the twin is the CPU
 *   forward on the weights rounded to f16 with the same adapter (f32), within 1e-4;
 * - generation with the adapter (KV cache) picks the CPU twin's tokens, log-probs within 1e-4;
 * - the adapter moves the log-probs by far more than the tolerance, so ignoring it fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaScore } from '../../../src/models/hf/llama-cpu';
import { llamaGenerate } from '../../../src/models/hf/llama-cpu-generate';
import {
  llamaModelFromWeights,
  type LlamaCpuModel,
} from '../../../src/models/hf/llama-cpu-weights';
import { llamaScoreGpu } from '../../../src/models/hf/llama-gpu';
import { llamaGenerateGpu } from '../../../src/models/hf/llama-gpu-generate';
import { type LlamaGpuLora, uploadLlamaLora } from '../../../src/models/hf/llama-gpu-lora';
import {
  type GpuWeightStorage,
  type LlamaGpuWeights,
  llamaGpuWeightsFromCpu,
} from '../../../src/models/hf/llama-gpu-weights';
import { type LlamaLora, createLlamaLora } from '../../../src/models/hf/llama-lora';
import { OpInputError } from '../../../src/ops/errors';
import { roundToF16 } from '../../../src/util/half-float';
import { testGpu } from '../../support/gpu';
import {
  type BrowserFixture,
  loadBrowserAdapter,
  loadBrowserFixture,
} from '../../support/hf-fixture-browser';
import { maxAbsDiff } from '../../support/expect-close';

const gpu = await testGpu();

const TOLERANCE: Record<GpuWeightStorage, number> = { f32: 5e-5, f16: 1e-4 };

interface LoraScoreGolden {
  score: { ids: number[]; logprobs: number[]; base_logprobs: number[] }[];
}

const measured: Record<string, number> = {};

describe.skipIf(!gpu)('GPU Llama with the PEFT adapter llama-tiny-lora', () => {
  const device = gpu!;
  let fixture: BrowserFixture;
  let cpu: LlamaCpuModel;
  let lora: LlamaLora;
  let golden: LoraScoreGolden;
  const held: { release(): void }[] = [];

  beforeAll(async () => {
    fixture = await loadBrowserFixture('llama-tiny');
    cpu = llamaModelFromWeights(fixture.spec, fixture.weights);
    const adapter = await loadBrowserAdapter('llama-tiny-lora', fixture.spec);
    lora = adapter.lora;
    golden = adapter.golden as LoraScoreGolden;
  });
  afterAll(() => held.forEach((h) => h.release()));

  function upload(storage: GpuWeightStorage): { weights: LlamaGpuWeights; adapters: LlamaGpuLora } {
    const weights = llamaGpuWeightsFromCpu(device, cpu, storage);
    const adapters = uploadLlamaLora(device, fixture.spec, lora);
    held.push(weights, adapters);
    return { weights, adapters };
  }

  it('f32 storage: golden log-probs with the adapter, and base log-probs with it off', async () => {
    const { weights, adapters } = upload('f32');
    let worst = 0;
    let moved = 0;
    for (const { ids, logprobs, base_logprobs: base } of golden.score) {
      const n = ids.length;
      const input = Int32Array.from(ids);
      const adapted = await llamaScoreGpu(device, weights, input, 1, n, { lora: adapters });
      const plain = await llamaScoreGpu(device, weights, input, 1, n);
      worst = Math.max(worst, maxAbsDiff(adapted, logprobs), maxAbsDiff(plain, base));
      moved = Math.max(moved, maxAbsDiff(logprobs, base));
    }
    measured['f32 vs golden'] = worst;
    expect(worst).toBeLessThan(TOLERANCE.f32);
    // The adapter changes the answer by far more than the tolerance.
    expect(moved).toBeGreaterThan(100 * TOLERANCE.f32);
  });

  it('f16 storage: the CPU twin on f16-rounded weights with the same adapter', async () => {
    const { weights, adapters } = upload('f16');
    const rounded = new Map([...fixture.weights].map(([k, w]) => [k, roundToF16(w)]));
    const twin = llamaModelFromWeights(fixture.spec, rounded);
    let worst = 0;
    for (const { ids } of golden.score) {
      const n = ids.length;
      const input = Int32Array.from(ids);
      const adapted = await llamaScoreGpu(device, weights, input, 1, n, { lora: adapters });
      const plain = await llamaScoreGpu(device, weights, input, 1, n);
      worst = Math.max(
        worst,
        maxAbsDiff(adapted, llamaScore(twin, input, 1, n, { lora }).logprobs),
        maxAbsDiff(plain, llamaScore(twin, input, 1, n).logprobs),
      );
    }
    measured['f16 vs CPU twin'] = worst;
    expect(worst).toBeLessThan(TOLERANCE.f16);
  });

  it('a batch of two sequences with adapters on some modules only, as the CPU twin', async () => {
    const partial = createLlamaLora(
      fixture.spec,
      { rank: 2, alpha: 3, targets: ['v_proj', 'up_proj'] },
      5,
    );
    // B = 0 at init would leave the model unchanged: give B values so the test can fail.
    partial.params.forEach((_, i, p) => (p[i] = Math.sin(i * 0.37) * 0.2));
    const weights = llamaGpuWeightsFromCpu(device, cpu, 'f32');
    const adapters = uploadLlamaLora(device, fixture.spec, partial);
    held.push(weights, adapters);
    const [a, b] = golden.score.filter((s) => s.ids.length >= 4);
    const T = Math.min(a!.ids.length, b!.ids.length);
    const ids = Int32Array.from([...a!.ids.slice(0, T), ...b!.ids.slice(0, T)]);
    const got = await llamaScoreGpu(device, weights, ids, 2, T, { lora: adapters });
    const want = llamaScore(cpu, ids, 2, T, { lora: partial }).logprobs;
    const base = llamaScore(cpu, ids, 2, T).logprobs;
    expect(maxAbsDiff(got, want)).toBeLessThan(TOLERANCE.f32);
    expect(maxAbsDiff(want, base)).toBeGreaterThan(100 * TOLERANCE.f32);
  });

  it('samples the CPU twin’s tokens with the adapter (KV cache, prompts of mixed lengths)', async () => {
    const { weights, adapters } = upload('f32');
    const base = golden.score.reduce(
      (l, s) => (s.ids.length > l.length ? s.ids : l),
      [] as number[],
    );
    const prompts = [base.slice(0, 5), base.slice(2, 7), base.slice(1, 4)].map((p) =>
      Int32Array.from(p),
    );
    const options = { maxNewTokens: 10, temperature: 0.9, topK: 40, topP: 0.95, seed: 11 };
    const expected = llamaGenerate(cpu, prompts, { ...options, lora });
    const actual = await llamaGenerateGpu(device, weights, prompts, { ...options, lora: adapters });
    expect(actual.tokens.map((t) => Array.from(t))).toEqual(
      expected.tokens.map((t) => Array.from(t)),
    );
    const plain = llamaGenerate(cpu, prompts, options);
    let moved = 0;
    for (let i = 0; i < prompts.length; i++) {
      expect(maxAbsDiff(actual.logprobs[i]!, expected.logprobs[i]!)).toBeLessThan(1e-4);
      moved = Math.max(moved, maxAbsDiff(expected.logprobs[i]!, plain.logprobs[i]!));
    }
    // Sampling with the adapter is not sampling the base model.
    expect(moved).toBeGreaterThan(1e-2);
  });

  it('refuses adapters made for another model, naming the field', () => {
    const other = { ...fixture.spec, layers: fixture.spec.layers + 1 };
    expect(() => uploadLlamaLora(device, other, lora)).toThrow(OpInputError);
    expect(() => uploadLlamaLora(device, other, lora)).toThrow(/lora.*layers/);
  });
});

afterAll(() => {
  if (Object.keys(measured).length > 0)
    console.log('[llama-gpu-lora] worst |Δ log-prob|:', measured);
});
