/**
 * LoRA-GRPO learns on a real model's files (bench/learn/lora-grpo.ts): the shipped tiny chat
 * model, adapters on every linear layer, the lab's GRPO trainer. On seed 1 its held-out strict
 * success rises by at least 0.3, while the matched control (the same seed, prompts and adapters
 * at lr 1e-9) does not. bench:learn --only=lora runs seeds 1–5 with both controls (LoRA on no
 * module as well: llama-lm-cpu.test.ts shows that such a model stays the base exactly).
 */
import { expect, it } from 'vitest';
import { LORA_GRPO_GAIN, loraGrpoRun } from '../../bench/learn/lora-grpo';

it(`LoRA-GRPO on the tiny chat model gains ≥ ${LORA_GRPO_GAIN} on seed 1; lr 1e-9 does not`, async () => {
  const run = await loraGrpoRun(1, 'LoRA-GRPO');
  const control = await loraGrpoRun(1, 'lr 1e-9');
  console.log(
    `lora-grpo seed 1: ${run.before.toFixed(3)} → ${run.after.toFixed(3)} (${run.seconds.toFixed(1)} s); ` +
      `control ${control.before.toFixed(3)} → ${control.after.toFixed(3)}`,
  );
  expect(control.before).toBe(run.before); // matched: the same model, prompts and sampler
  expect(run.gain).toBeGreaterThanOrEqual(LORA_GRPO_GAIN);
  expect(control.gain).toBeLessThan(LORA_GRPO_GAIN);
}, 600_000);
