/**
 * The Llama-family GPU forward and generator (src/models/hf/llama-gpu*.ts) against the
 * independent float64 reference's golden values (tests/fixtures/hf/) and against their CPU twins,
 * for f32 and f16 weight storage. Runs in Node (Dawn) and Chromium.
 *
 * Tolerances, absolute on log-probs: f32 storage 5e-5 (the GPU accumulates in f32; the
 * reference's own f32 PyTorch forward lands within 7.3e-6 of its float64 values, and f32 GPU
 * kernels sum in other orders), f16 storage 1e-4 against the reference's f16_storage values
 * (float64 forward on the weights rounded to f16) — tight enough that skipping the rounding
 * (which moves llama-tiny's log-probs by up to 0.018) fails.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { llamaScore } from '../../../src/models/hf/llama-cpu';
import { llamaGenerate } from '../../../src/models/hf/llama-cpu-generate';
import {
  llamaModelFromWeights,
  type LlamaCpuModel,
} from '../../../src/models/hf/llama-cpu-weights';
import { llamaScoreGpu } from '../../../src/models/hf/llama-gpu';
import { llamaGenerateGpu } from '../../../src/models/hf/llama-gpu-generate';
import {
  type GpuWeightStorage,
  type LlamaGpuWeights,
  llamaGpuWeightsFromCpu,
} from '../../../src/models/hf/llama-gpu-weights';
import { roundToF16 } from '../../../src/util/half-float';
import { testGpu } from '../../support/gpu';
import { type BrowserFixture, loadBrowserFixture } from '../../support/hf-fixture-browser';

const gpu = await testGpu();

const TOLERANCE: Record<GpuWeightStorage, number> = { f32: 5e-5, f16: 1e-4 };

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const measured: Record<string, number> = {};

describe.skipIf(!gpu).each(['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'])('GPU Llama %s', (name) => {
  const device = gpu!;
  let fixture: BrowserFixture;
  let cpu: LlamaCpuModel;
  const uploaded: LlamaGpuWeights[] = [];

  beforeAll(async () => {
    fixture = await loadBrowserFixture(name);
    cpu = llamaModelFromWeights(fixture.spec, fixture.weights);
  });
  afterAll(() => uploaded.forEach((w) => w.release()));

  function upload(storage: GpuWeightStorage): LlamaGpuWeights {
    const weights = llamaGpuWeightsFromCpu(device, cpu, storage);
    uploaded.push(weights);
    return weights;
  }

  /** The golden (ids, log-probs) pairs a storage is checked against. */
  function goldenSequences(storage: GpuWeightStorage) {
    const { golden } = fixture;
    const plain = [...golden.sequences, golden.long_sequence];
    // qwen3-tiny is stored in f16 already: its f16 storage is the stored weights themselves.
    const sequences =
      storage === 'f16' && golden.f16_storage ? golden.f16_storage.sequences : plain;
    return sequences.filter((s) => s.ids.length >= 2);
  }

  it.each(['f32', 'f16'] as const)('scores the golden sequences (%s storage)', async (storage) => {
    const weights = upload(storage);
    let worst = 0;
    for (const { ids, logprobs } of goldenSequences(storage)) {
      const scored = await llamaScoreGpu(device, weights, Int32Array.from(ids), 1, ids.length);
      worst = Math.max(worst, maxAbsDiff(scored, logprobs));
    }
    measured[`${name} ${storage}`] = worst;
    expect(worst).toBeLessThan(TOLERANCE[storage]);
  });

  it('scores a batch of sequences as the CPU twin does, row for row', async () => {
    const weights = upload('f32');
    const [a, b] = fixture.golden.sequences.filter((s) => s.ids.length >= 4);
    const T = Math.min(a!.ids.length, b!.ids.length);
    const ids = Int32Array.from([...a!.ids.slice(0, T), ...b!.ids.slice(0, T)]);
    const gpuScores = await llamaScoreGpu(device, weights, ids, 2, T, { temperature: 0.7 });
    const cpuScores = llamaScore(cpu, ids, 2, T, { temperature: 0.7 }).logprobs;
    expect(maxAbsDiff(gpuScores, cpuScores)).toBeLessThan(TOLERANCE.f32);
  });

  it('generates the golden greedy continuation with the KV cache', async () => {
    const weights = upload('f32');
    const { prompt_ids: prompt, ids } = fixture.golden.greedy;
    const out = await llamaGenerateGpu(device, weights, [Int32Array.from(prompt)], {
      maxNewTokens: ids.length,
      temperature: 0,
    });
    expect(Array.from(out.tokens[0]!)).toEqual(ids);
    expect(out.finish).toEqual(['length']);
  });

  it.each(name === 'llama-tiny' ? (['f32', 'f16'] as const) : (['f32'] as const))(
    'samples the CPU twin’s tokens for prompts of mixed lengths (%s storage)',
    async (storage) => {
      const weights = upload(storage);
      // The CPU twin of f16 storage: every weight rounded to f16, then used in f32.
      const twin =
        storage === 'f32'
          ? cpu
          : llamaModelFromWeights(
              fixture.spec,
              new Map([...fixture.weights].map(([k, w]) => [k, roundToF16(w)])),
            );
      const base = fixture.golden.long_sequence.ids;
      const prompts = [base.slice(0, 5), base.slice(10, 15), base.slice(20, 27), base.slice(3, 6)];
      const options = { maxNewTokens: 12, temperature: 0.9, topK: 40, topP: 0.95, seed: 7 };
      const input = prompts.map((p) => Int32Array.from(p));
      const expected = llamaGenerate(twin, input, options);
      // Lengths 5, 5, 7 and 3 decode as one batch: one prefill and one loop of 11 steps, each
      // sequence at its own length in the cache (its CPU twin generates one sequence at a time).
      const batches = vi.spyOn(device, 'beginBatch');
      let actual: Awaited<ReturnType<typeof llamaGenerateGpu>>;
      try {
        actual = await llamaGenerateGpu(device, weights, input, options);
        const labels = batches.mock.calls.map(([label]) => label);
        expect(labels.filter((l) => l === 'llama prefill')).toHaveLength(1);
        expect(labels.filter((l) => l === 'llama decode step')).toHaveLength(11);
      } finally {
        batches.mockRestore();
      }
      expect(actual.tokens.map((t) => Array.from(t))).toEqual(
        expected.tokens.map((t) => Array.from(t)),
      );
      for (let i = 0; i < prompts.length; i++) {
        expect(maxAbsDiff(actual.logprobs[i]!, expected.logprobs[i]!)).toBeLessThan(1e-4);
      }
    },
  );

  it('runs a prompt far longer than the rest as a batch of its own, with the same tokens', async () => {
    const weights = upload('f32');
    const base = fixture.golden.long_sequence.ids;
    // Lengths 4, 3, 60, 4: padding the three short ones to 60 would triple the batch's rows.
    const input = [base.slice(0, 4), base.slice(5, 8), base.slice(10, 70), base.slice(2, 6)].map(
      (p) => Int32Array.from(p),
    );
    const options = { maxNewTokens: 6, temperature: 0.9, topK: 40, seed: 11 };
    const expected = llamaGenerate(cpu, input, options);
    const batches = vi.spyOn(device, 'beginBatch');
    try {
      const actual = await llamaGenerateGpu(device, weights, input, options);
      const labels = batches.mock.calls.map(([label]) => label);
      expect(labels.filter((l) => l === 'llama prefill')).toHaveLength(2);
      expect(actual.tokens.map((t) => Array.from(t))).toEqual(
        expected.tokens.map((t) => Array.from(t)),
      );
    } finally {
      batches.mockRestore();
    }
  });
});

describe.skipIf(!gpu)('GPU Llama generation stops', () => {
  const device = gpu!;

  it('stops a sequence at a stop id and keeps the others going', async () => {
    const fixture = await loadBrowserFixture('llama-tiny');
    const weights = llamaGpuWeightsFromCpu(
      device,
      llamaModelFromWeights(fixture.spec, fixture.weights),
      'f32',
    );
    const prompt = Int32Array.from(fixture.golden.greedy.prompt_ids);
    const free = await llamaGenerateGpu(device, weights, [prompt], {
      maxNewTokens: 8,
      temperature: 1,
      seed: 3,
    });
    const stopAt = free.tokens[0]![4]!;
    const firstStop = Array.from(free.tokens[0]!).indexOf(stopAt);
    const stopped = await llamaGenerateGpu(device, weights, [prompt, prompt], {
      maxNewTokens: 8,
      temperature: 1,
      seed: 3,
      stopIds: [stopAt],
    });
    expect(Array.from(stopped.tokens[0]!)).toEqual(
      Array.from(free.tokens[0]!).slice(0, firstStop + 1),
    );
    expect(stopped.finish[0]).toBe('stop');
    // The second sequence draws its own tokens and ends at its own first stop id, or runs to 8.
    const other = Array.from(stopped.tokens[1]!);
    const otherStop = other.indexOf(stopAt);
    if (otherStop >= 0) {
      expect(other.length).toBe(otherStop + 1);
      expect(stopped.finish[1]).toBe('stop');
    } else {
      expect(other.length).toBe(8);
      expect(stopped.finish[1]).toBe('length');
    }
    weights.release();
  });
});

afterAll(() => {
  if (Object.keys(measured).length > 0) console.log('[llama-gpu] worst |Δ log-prob|:', measured);
});
