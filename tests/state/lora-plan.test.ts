/**
 * What the LoRA panel says before a run starts (src/state/lora-plan.ts): on the CPU, up to
 * CPU_MAX_PARAMETERS and refused above with the numbers; on the GPU, the step's memory per run
 * from the task's prompt length in the model's chat template, and a step over the device's binding
 * refused with the setting to change.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadLmTokenizer } from '../../src/cli/lm-model';
import type { HfTokenizer } from '../../src/models/hf/hf-tokenizer';
import { loraTrainFit } from '../../src/state/lora-plan';
import { QWEN25_05B, SMOLLM2_135M } from '../support/published-specs';
import { tinyLlamaSpec } from '../support/tiny-llama-specs';

let tokenizer: HfTokenizer;
beforeAll(async () => {
  tokenizer = await loadLmTokenizer('public/models/hf/tiny-chat');
});

const task = { name: 'addition', options: { minDigits: 1, maxDigits: 2 } };
const GB = 1e9;

describe('loraTrainFit', () => {
  it('on the CPU: small models train, large ones are refused with the numbers', () => {
    const small = loraTrainFit({
      spec: tinyLlamaSpec('llama'),
      tokenizer,
      task,
      rank: 8,
      promptsPerUpdate: 16,
      backend: 'cpu',
    });
    expect(small).toEqual({ ok: true, text: expect.stringMatching(/^Trains on the CPU/) });
    const large = loraTrainFit({
      spec: SMOLLM2_135M,
      tokenizer,
      task,
      rank: 8,
      promptsPerUpdate: 16,
      backend: 'cpu',
    });
    expect(large.ok).toBe(false);
    expect(large.text).toMatch(/up to 50\.0M parameters; this one has 134\.5M/);
  });

  it('on the GPU: the memory per run for the batch and the prompt length in the template', () => {
    const limits = { maxBufferSize: 4 * GB, maxStorageBufferBindingSize: 2 * GB };
    const fit = loraTrainFit({
      spec: SMOLLM2_135M,
      tokenizer,
      task,
      rank: 8,
      promptsPerUpdate: 4,
      backend: 'webgpu',
      limits,
    });
    expect(fit.ok).toBe(true);
    // 4 prompts × 8 answers; the template's framing + 5 characters + 8 new tokens.
    expect(fit.text).toMatch(
      /^Trains on the GPU, each run on a device of its own: [\d.]+ [GM]B per run \(weights 269 MB as f16, .*activations kept for 32 answers × \d+ tokens/,
    );
  });

  it('on the GPU: a step over the device’s binding is refused, naming the setting', () => {
    const limits = { maxBufferSize: 256e6, maxStorageBufferBindingSize: 128e6 };
    const fit = loraTrainFit({
      spec: QWEN25_05B,
      tokenizer,
      task,
      rank: 8,
      promptsPerUpdate: 16,
      backend: 'webgpu',
      limits,
    });
    expect(fit.ok).toBe(false);
    expect(fit.text).toMatch(
      /^Refused: one training step's logits for 128 answers × \d+ tokens take .* more than the 128 MB .*fewer prompts per update/,
    );
  });
});
