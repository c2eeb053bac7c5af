/**
 * A brought Llama model as the trainers' LanguageModel on WebGPU (src/models/hf/llama-lm-gpu.ts),
 * checked against the independent float64 reference's LoRA fixture (tests/fixtures/hf/
 * llama-tiny-lora/, scripts/reference/make_lora_fixture.py) as its CPU twin is
 * (tests/models/hf/llama-lm-cpu.test.ts): one LoRA-GRPO step taken the way every trainer takes it
 * — policyStep, here with the loss on the GPU (the model has policyStep), and again through the
 * host path (scoreTokens, the CPU loss, backwardFromLogp) — gives the reference's loss, updated
 * adapters and log-probs after; the base with the adapters off scores as the reference's base;
 * generation matches the CPU twin's rows; bad input is refused leaving the adapters as they were.
 * f32 storage, so that the reference's numbers apply. Runs in Node (Dawn) and Chromium.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { hfBaseGroup } from '../../../src/models/hf/hf-weights';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { llamaGpuWeightsFromCpu } from '../../../src/models/hf/llama-gpu-weights';
import { LlamaCpuLanguageModel } from '../../../src/models/hf/llama-lm-cpu';
import { LlamaGpuLanguageModel } from '../../../src/models/hf/llama-lm-gpu';
import { type LlamaLora, llamaLoraFromParams } from '../../../src/models/hf/llama-lora';
import type { LanguageModel } from '../../../src/models/language-model';
import type { ModelSpec } from '../../../src/models/model-spec';
import { policyStep, policyStepOnHost } from '../../../src/rl/policy-step';
import { testGpu } from '../../support/gpu';
import { loadBrowserAdapter, loadBrowserFixture } from '../../support/hf-fixture-browser';
import { maxAbsDiff } from '../../support/expect-close';
import { type LoraGolden, shifted } from '../../support/lora-golden';

const gpu = await testGpu();

describe.skipIf(!gpu)('LlamaGpuLanguageModel against the reference fixture', () => {
  const device = gpu!;
  let spec: ModelSpec;
  let weights: Map<string, Float32Array>;
  let golden: LoraGolden;
  let fixtureLora: LlamaLora;

  /** A fresh GPU model (f32 storage) with a copy of the fixture's adapters. */
  const adapted = (microBatch?: number) => {
    const gpuWeights = llamaGpuWeightsFromCpu(device, llamaModelFromWeights(spec, weights), 'f32');
    const lora = llamaLoraFromParams(spec, fixtureLora.settings, fixtureLora.params.slice());
    return new LlamaGpuLanguageModel(device, gpuWeights, lora, {
      ...(microBatch === undefined ? {} : { microBatch }),
    });
  };

  beforeAll(async () => {
    const fixture = await loadBrowserFixture('llama-tiny');
    spec = fixture.spec;
    weights = fixture.weights;
    const adapter = await loadBrowserAdapter('llama-tiny-lora', spec);
    fixtureLora = adapter.lora;
    golden = adapter.golden as LoraGolden;
  });

  it("has a frozen 'base' group and a trainable 'lora' group; without adapters, 'base' only", () => {
    const lm = adapted();
    expect(lm.backend).toBe('webgpu');
    expect(lm.groups.map((g) => [g.name, g.trainable])).toEqual([
      ['base', false],
      ['lora', true],
    ]);
    const reference = lm.withoutAdapters();
    expect(reference.groups.map((g) => g.name)).toEqual(['base']);
    reference.dispose();
    lm.dispose();
  });

  it('scores as the reference with the adapters on, and off in withoutAdapters()', async () => {
    const lm = adapted();
    const reference = lm.withoutAdapters();
    for (const { ids, logprobs, base_logprobs: baseLogprobs } of golden.score) {
      const { tokens, targets } = shifted([ids]);
      const on = await lm.scoreTokens(tokens, targets, 1, ids.length - 1, 1);
      const off = await reference.scoreTokens(tokens, targets, 1, ids.length - 1, 1);
      expect(maxAbsDiff(on.logp, logprobs)).toBeLessThan(5e-5);
      expect(maxAbsDiff(off.logp, baseLogprobs)).toBeLessThan(5e-5);
      expect(maxAbsDiff(on.logp, off.logp)).toBeGreaterThan(1e-3); // the adapter matters
    }
    reference.dispose();
    lm.dispose();
  });

  it('withoutAdapters() scores through one reused workspace, not a training pass', async () => {
    const lm = adapted();
    const reference = lm.withoutAdapters();
    const { ids } = golden.score[0]!;
    const { tokens, targets } = shifted([ids, ids, ids, ids]);
    const T = ids.length - 1;
    /** Bytes of GPU buffers requested while `model` scores the batch the first time. */
    const requested = async (model: LlamaGpuLanguageModel) => {
      const storage = vi.spyOn(device, 'storage');
      try {
        await model.scoreTokens(tokens, targets, 4, T, 1);
        return storage.mock.calls.reduce((a, [bytes]) => a + bytes, 0);
      } finally {
        storage.mockRestore();
      }
    };
    const trainable = await requested(lm);
    const frozen = await requested(reference);
    // The training pass keeps every layer's activations; the reference one layer's worth.
    expect(frozen).toBeLessThan(trainable / 2);
    reference.dispose();
    lm.dispose();
  });

  const PATHS = ['the GPU loss (policyStep)', 'the host loss (backwardFromLogp)'] as const;
  const CASES = PATHS.flatMap(
    (path) =>
      [
        [path, undefined],
        [path, 1],
      ] as const,
  );
  for (const [path, microBatch] of CASES) {
    const how = microBatch === undefined ? '' : `, in micro-batches of ${microBatch} sequence`;
    it(`one LoRA-GRPO step through ${path}${how}: the reference's loss, adapters and log-probs after`, async () => {
      const { ids, mask, advantages, adamw } = golden.grpo;
      const B = ids.length;
      const T = ids[0]!.length - 1;
      const { tokens, targets } = shifted(ids);
      expect(B).toBeGreaterThan(1); // so that micro-batches of one are a real split
      const lm = adapted(microBatch);
      const request = {
        tokens,
        targets,
        rows: B,
        seq: T,
        temperature: 1,
        mask: Float32Array.from(mask.flat()),
        advantages: Float32Array.from(advantages.flatMap((a) => Array<number>(T).fill(a))),
        policyLoss: { clipLow: 0.2, clipHigh: 0.2, aggregation: 'token-mean' as const },
        aggregation: { mode: 'token-mean' as const },
        entropyCoef: 0,
        optimizer: {
          lr: adamw.lr,
          beta1: adamw.betas[0],
          beta2: adamw.betas[1],
          eps: adamw.eps,
          weightDecay: adamw.weight_decay,
          maxGradNorm: 0,
        },
      };
      const storage = vi.spyOn(device, 'storage');
      const result =
        path === 'the GPU loss (policyStep)'
          ? await policyStep(lm, request)
          : await policyStepOnHost(lm as LanguageModel, request);
      const largest = Math.max(...storage.mock.calls.map(([bytes]) => bytes));
      storage.mockRestore();
      // In micro-batches no buffer holds the whole batch's logits (or their gradient).
      if (microBatch !== undefined) expect(largest).toBeLessThan(B * T * spec.vocab * 4);
      expect(result.skipped).toBeUndefined();
      expect(Math.abs(result.losses!.pgLoss - golden.grpo.loss)).toBeLessThan(1e-5);
      const [step] = await lm.takeMetrics();
      expect(step).toMatchObject({ step: 1, applied: true, clipScale: 1 });

      const lora = await lm.readParams('lora');
      const { layout } = fixtureLora.group;
      let moved = 0;
      for (const [name, want] of Object.entries(golden.grpo.updated)) {
        expect(maxAbsDiff(layout.view(lora, name), want), name).toBeLessThan(1e-6);
        moved = Math.max(moved, maxAbsDiff(want, layout.view(fixtureLora.params, name)));
      }
      expect(moved).toBeGreaterThan(1e-4); // the step moved the adapters by far more
      const after = await lm.scoreTokens(tokens, targets, B, T, 1);
      expect(maxAbsDiff(after.logp, golden.grpo.logprobs_after.flat())).toBeLessThan(5e-5);
      const moments = await lm.readOptimizer('lora');
      expect(moments.m.length).toBe(lora.length);
      expect(moments.m.some((x) => x !== 0)).toBe(true);
      lm.dispose();
    });
  }

  it('a cross-entropy step in micro-batches of one sequence: the one-pass step’s loss and adapters', async () => {
    const { ids } = golden.grpo;
    const B = ids.length;
    const T = ids[0]!.length - 1;
    expect(B).toBeGreaterThan(1);
    const { tokens, targets } = shifted(ids);
    // Train on every target but each row's first (a prompt) so the mask is not all ones.
    const mask = Float32Array.from({ length: B * T }, (_, i) => (i % T === 0 ? 0 : 1));
    const batch = { batch: B, seq: T, tokens, targets, mask };
    const optimizer = {
      lr: 1e-2,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.01,
      maxGradNorm: 1,
    };
    const step = async (microBatch?: number) => {
      const lm = adapted(microBatch);
      const storage = vi.spyOn(device, 'storage');
      await lm.trainCrossEntropy(batch, optimizer);
      const largest = Math.max(...storage.mock.calls.map(([bytes]) => bytes));
      storage.mockRestore();
      const [metrics] = await lm.takeMetrics();
      const lora = await lm.readParams('lora');
      lm.dispose();
      return { loss: metrics!.loss, lora, largest };
    };
    const whole = await step();
    const sliced = await step(1);
    // The sliced step holds one sequence's logits at a time, never the batch's.
    expect(sliced.largest).toBeLessThan(B * T * spec.vocab * 4);
    expect(whole.loss).toBeGreaterThan(1);
    expect(Math.abs(sliced.loss - whole.loss)).toBeLessThan(1e-5);
    expect(maxAbsDiff(whole.lora, fixtureLora.params)).toBeGreaterThan(1e-3); // it trained
    expect(maxAbsDiff(sliced.lora, whole.lora)).toBeLessThan(1e-6);
  });

  it('generates the rows the CPU twin generates (prompt, new ids, padding)', async () => {
    const lm = adapted();
    const { layout } = hfBaseGroup(spec, 'f32');
    const base = new Float32Array(layout.total);
    for (const e of layout.entries) layout.view(base, e.name).set(weights.get(e.name)!);
    const cpu = new LlamaCpuLanguageModel(
      spec,
      base,
      llamaLoraFromParams(spec, fixtureLora.settings, fixtureLora.params.slice()),
    );
    const request = {
      prompts: [Int32Array.of(1, 5, 9), Int32Array.of(2, 7, 4, 3, 8)],
      maxLength: 9,
      maxNewTokens: 5,
      stopTokens: [],
      padToken: 0,
      sampling: { temperature: 0.9, topK: 20 },
      seed: 3,
    };
    const [onGpu, onCpu] = [await lm.generate(request), await cpu.generate(request)];
    expect(Array.from(onGpu.tokens)).toEqual(Array.from(onCpu.tokens));
    expect(Array.from(onGpu.mask)).toEqual(Array.from(onCpu.mask));
    expect(maxAbsDiff(onGpu.logprobs, onCpu.logprobs)).toBeLessThan(1e-4);
    lm.dispose();
  });

  it('refuses bad adapters, the base and a backward without adapters, the adapters kept', async () => {
    const lm = adapted();
    const before = await lm.readParams('lora');
    expect(() => lm.writeParams(new Float32Array(3), 'lora')).toThrow(/'lora' group's \d+ floats/);
    const nan = before.slice();
    nan[7] = NaN;
    expect(() => lm.writeParams(nan, 'lora')).toThrow(/params.*finite/);
    expect(() => lm.writeParams(before, 'base')).toThrow(/'base'.*(frozen|trainable)/);
    await expect(lm.readParams('base')).rejects.toThrow(/stays on the GPU/);
    expect(await lm.readParams('lora')).toEqual(before);
    const reference = lm.withoutAdapters();
    await reference.scoreTokens(Int32Array.of(1, 2), Int32Array.of(2, 3), 1, 2, 1);
    await expect(
      reference.backwardFromLogp(new Float32Array(2), undefined, {
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      }),
    ).rejects.toThrow(/frozen/);
    reference.dispose();
    lm.dispose();
  });
});
