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

const task = { name: 'addition', options: { minDigits: 1, maxDigits: 2 }, maxNewTokens: 8 };
const GB = 1e9;

describe('loraTrainFit', () => {
  it('on the CPU: small models train, large ones are refused with the numbers', () => {
    const small = loraTrainFit({
      spec: { ...tinyLlamaSpec('llama'), context: 64 },
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
    expect(large.refused).toBe('model'); // no setting of the form helps: the page hides it
    expect(large.text).toMatch(/up to 50\.0M parameters; this one has 134\.5M/);
  });

  it('on the GPU: the memory per run, in micro-batches where the batch does not fit', () => {
    const limits = { maxBufferSize: 4 * GB, maxStorageBufferBindingSize: 2 * GB };
    const fit = (promptsPerUpdate: number) =>
      loraTrainFit({
        spec: SMOLLM2_135M,
        tokenizer,
        task,
        rank: 8,
        promptsPerUpdate,
        backend: 'webgpu',
        limits,
      });
    // 1 prompt × 8 answers: the whole batch at once (the template's framing + 5 characters + 8).
    const one = fit(1);
    expect(one.ok).toBe(true);
    expect(one.text).toMatch(
      /^Trains on the GPU, each run on a device of its own: [\d.]+ MB per run \(weights 269 MB as f16, .*activations kept for 8 answers × 25 tokens/,
    );
    expect(one.text).not.toContain('micro-batches');
    // 4 prompts × 8 answers pass 1.5 GB at this shape: micro-batches of 16 fit.
    const four = fit(4);
    expect(four.ok).toBe(true);
    expect(four.text).toMatch(/activations kept for 16 answers × 25 tokens/);
    expect(four.text).toContain(
      'Each step runs in micro-batches of 16 answers (its 32 do not fit 1.50 GB at once)',
    );
  });

  it('refuses a task whose prompt does not fit the context, with both numbers', () => {
    // The tiny chat model's 64 positions cannot hold a tool task's instructions and tool list.
    const tool = { name: 'multiply', options: { maxTurns: 3, maxCalls: 2 }, maxNewTokens: 48 };
    for (const backend of ['cpu', 'webgpu'] as const) {
      const fit = loraTrainFit({
        spec: tinyLlamaSpec('llama'),
        tokenizer,
        task: tool,
        rank: 8,
        promptsPerUpdate: 2,
        backend,
      });
      expect(fit.ok).toBe(false);
      expect(fit.refused).toBe('settings'); // another task fits: the form stays
      expect(fit.text).toMatch(
        /^Refused: 'multiply\(2–3 digits, calc\)' needs a context of \d{3,} tokens in this model's chat template \(its prompt, tools, calls and results and an answer\); the model's is \d+\./,
      );
    }
    // DPO pairs single-turn answers: a tool task is refused for it, whatever the context.
    const dpo = loraTrainFit({
      spec: { ...tinyLlamaSpec('llama'), context: 4096 },
      tokenizer,
      task: tool,
      rank: 8,
      promptsPerUpdate: 1,
      algorithm: 'dpo',
      backend: 'cpu',
    });
    expect(dpo).toMatchObject({ ok: false, refused: 'settings' });
    expect(dpo.text).toMatch(/is a tool task, and DPO pairs single-turn answers/);
    // With a long context it fits, and the step's rows are sized from the same bound.
    const long = loraTrainFit({
      spec: { ...tinyLlamaSpec('llama'), context: 4096 },
      tokenizer,
      task: tool,
      rank: 8,
      promptsPerUpdate: 1,
      backend: 'webgpu',
    });
    expect(long.ok).toBe(true);
    const seq = Number(/activations kept for 8 answers × (\d+) tokens/.exec(long.text)?.[1]);
    const needed = Number(
      /needs a context of (\d+) tokens/.exec(
        loraTrainFit({
          spec: tinyLlamaSpec('llama'),
          tokenizer,
          task: tool,
          rank: 8,
          promptsPerUpdate: 1,
          backend: 'cpu',
        }).text,
      )?.[1],
    );
    expect(seq).toBe(needed - 1 + 48);
  });

  it('on the GPU: a step that fits in no micro-batch is refused, naming the setting', () => {
    // One answer's logits (25 × 151,936 f32, 15 MB) are more than a 4 MB binding holds.
    const limits = { maxBufferSize: 4e6, maxStorageBufferBindingSize: 4e6 };
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
      /^Refused: one training step's logits for 1 answers × 25 tokens take [\d.]+ MB, more than the 4\.0 MB .*fewer tokens per answer/,
    );
  });
});
