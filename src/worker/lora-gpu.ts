/**
 * A LoRA worker's model on the GPU (lora.worker.ts): the worker's own device, the adapter's limits
 * asked for, the base uploaded as f16 from the page's f32 weights once the step's memory plan
 * (lora-train-plan.ts) fits the device's bindings and the run's budget — in micro-batches where
 * the whole batch does not; a step that fits in no way is refused with its numbers before a byte
 * is uploaded.
 */
import { acquireForChoice, describeAdapter } from '../gpu';
import { hfBaseGroup } from '../models/hf/hf-weights';
import { llamaGpuWeightsFromTensors } from '../models/hf/llama-gpu-weights';
import { LlamaGpuLanguageModel } from '../models/hf/llama-lm-gpu';
import type { LlamaLora, LoraSettings } from '../models/hf/llama-lora';
import { LORA_RUN_BUDGET_BYTES, planLoraMicroBatches } from '../models/hf/lora-train-plan';
import type { LoraPolicy } from '../rl/lora-grpo-session';
import type { LoraRunRequest } from './lora-protocol';

/**
 * The run's model on this worker's own GPU device (the adapter's limits asked for): the base
 * uploaded as f16 from the f32 weights, after the step's memory plan fits one binding.
 */
export async function loraGpuPolicy(
  request: LoraRunRequest,
  lora: LoraSettings,
  seq: number,
): Promise<{ policy: (adapters: LlamaLora) => LoraPolicy; device: string }> {
  const found = await acquireForChoice('webgpu', 'LoRA on WebGPU', { limits: 'adapter' });
  if (!found.ok) throw new Error(`no WebGPU device for training: ${found.reason.message}`);
  const { gpu } = found;
  const { spec, base } = request;
  try {
    const batch = request.promptsPerUpdate * request.groupSize;
    const plan = planLoraMicroBatches(spec, {
      storage: 'f16',
      lora,
      batch,
      seq: Math.min(seq, spec.context),
      limits: gpu.summary.limits,
      budgetBytes: LORA_RUN_BUDGET_BYTES,
    });
    const { layout } = hfBaseGroup(spec, 'f32');
    const weights = llamaGpuWeightsFromTensors(gpu, spec, (e) => layout.view(base, e.name), 'f16');
    const micro = plan.microBatch < batch ? { microBatch: plan.microBatch } : {};
    const slices = plan.microBatch < batch ? `, ${plan.microBatch} answers at a time` : '';
    return {
      policy: (adapters) => new LlamaGpuLanguageModel(gpu, weights, adapters, micro),
      device: `${describeAdapter(gpu.summary)}${slices}`,
    };
  } catch (error) {
    gpu.destroy();
    throw error;
  }
}
