/**
 * The LoRA training plan's totals and refusals: at a real model's shape (SmolLM2-135M's, from its
 * published config) the parts add up, grow with the batch as they should, and a step whose logits
 * pass one binding, or whose total passes the budget, is refused with the numbers and the
 * settings to change.
 */
import { describe, expect, it } from 'vitest';
import { resolveLoraTargets } from '../../../src/models/hf/llama-lora';
import { planLoraMicroBatches, planLoraTraining } from '../../../src/models/hf/lora-train-plan';
import { MemoryPlanError } from '../../../src/models/hf/memory-plan';
import { parameterCount } from '../../../src/models/model-spec';
import { SMOLLM2_135M } from '../../support/published-specs';

const GB = 1e9;
const limits = { maxBufferSize: 4 * GB, maxStorageBufferBindingSize: 2 * GB };
const lora = { rank: 16, alpha: 32, targets: resolveLoraTargets('all-linear') };

describe('planLoraTraining', () => {
  it('adds up the weights, adapters with AdamW, activations, scratch and logits', () => {
    const plan = planLoraTraining(SMOLLM2_135M, {
      storage: 'f16',
      lora,
      batch: 4,
      seq: 128,
      limits,
    });
    expect(plan.weightBytes).toBe(parameterCount(SMOLLM2_135M) * 2);
    expect(plan.totalBytes).toBe(
      plan.weightBytes +
        plan.adapterBytes +
        plan.activationBytes +
        plan.scratchBytes +
        plan.logitBytes,
    );
    // Logits and their gradient: (B·T, V) f32 each, plus six per-token rows.
    expect(plan.logitBytes).toBe(4 * (2 * 4 * 128 * SMOLLM2_135M.vocab + 6 * 4 * 128));
    expect(plan.largest).toEqual({ name: 'logits', bytes: 4 * 128 * SMOLLM2_135M.vocab * 4 });
    // Doubling the answers nearly doubles what grows with them; the weights stay.
    const twice = planLoraTraining(SMOLLM2_135M, {
      storage: 'f16',
      lora,
      batch: 8,
      seq: 128,
      limits,
    });
    expect(twice.weightBytes).toBe(plan.weightBytes);
    expect(twice.activationBytes / plan.activationBytes).toBeCloseTo(2, 2);
  });

  it('refuses logits past one binding, naming the settings to change', () => {
    const small = { maxBufferSize: 256e6, maxStorageBufferBindingSize: 128e6 };
    const request = { storage: 'f16' as const, lora, batch: 32, seq: 320, limits: small };
    expect(() => planLoraTraining(SMOLLM2_135M, request)).toThrow(MemoryPlanError);
    expect(() => planLoraTraining(SMOLLM2_135M, request)).toThrow(
      /logits for 32 answers × 320 tokens take 2\.01 GB, more than the 128 MB .*fewer prompts per update/,
    );
  });

  it('refuses a total past the budget, with each part', () => {
    const request = {
      storage: 'f16' as const,
      lora,
      batch: 8,
      seq: 128,
      limits,
      budgetBytes: 1 * GB,
    };
    expect(() => planLoraTraining(SMOLLM2_135M, request)).toThrow(
      /training needs [\d.]+ GB \(weights 269 MB, adapters and AdamW [\d.]+ MB, activations kept for 8 answers × 128 tokens [\d.]+ GB.*more than the 1\.00 GB available/,
    );
    expect(() => planLoraTraining(SMOLLM2_135M, { ...request, batch: 0 })).toThrow(/batch must be/);
  });

  it('micro-batches hold one slice’s activations and logits, the per-token rows of all', () => {
    const whole = planLoraTraining(SMOLLM2_135M, {
      storage: 'f16',
      lora,
      batch: 32,
      seq: 128,
      limits,
    });
    const sliced = planLoraTraining(SMOLLM2_135M, {
      storage: 'f16',
      lora,
      batch: 32,
      seq: 128,
      microBatch: 4,
      limits,
    });
    expect(sliced.microBatch).toBe(4);
    expect(sliced.activationBytes / whole.activationBytes).toBeCloseTo(4 / 32, 2);
    expect(sliced.largest.bytes).toBe(4 * 128 * SMOLLM2_135M.vocab * 4);
    expect(sliced.weightBytes).toBe(whole.weightBytes);
    expect(() =>
      planLoraTraining(SMOLLM2_135M, {
        storage: 'f16',
        lora,
        batch: 4,
        seq: 8,
        microBatch: 5,
        limits,
      }),
    ).toThrow(/microBatch must be an integer in \[1, 4\]/);
  });

  it('picks the largest micro-batch that fits the budget, or refuses with the numbers', () => {
    const request = {
      storage: 'f16' as const,
      lora,
      batch: 32,
      seq: 128,
      limits,
      budgetBytes: 1.5 * GB,
    };
    const plan = planLoraMicroBatches(SMOLLM2_135M, request);
    expect(plan.totalBytes).toBeLessThanOrEqual(1.5 * GB);
    expect(plan.microBatch).toBeLessThan(32);
    // Twice as large would not have fit.
    expect(() =>
      planLoraTraining(SMOLLM2_135M, { ...request, microBatch: plan.microBatch * 2 }),
    ).toThrow(MemoryPlanError);
    expect(planLoraMicroBatches(SMOLLM2_135M, { ...request, batch: 2 }).microBatch).toBe(2);
    expect(() => planLoraMicroBatches(SMOLLM2_135M, { ...request, budgetBytes: 0.2 * GB })).toThrow(
      /training needs .* more than the 200 MB available/,
    );
  });
});
