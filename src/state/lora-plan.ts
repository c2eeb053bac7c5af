/**
 * Where the page's LoRA-GRPO run trains and whether it fits, said before it starts: on the GPU
 * (where the model was loaded on one) with the step's memory plan (lora-train-plan.ts) against
 * the device's buffer limits, or on the CPU up to CPU_MAX_PARAMETERS. Each of the two runs (the
 * run and its control) trains in a worker, and on the GPU on a device, of its own.
 */
import { isAgentTask } from '../agents/agent-task';
import { promptLengthBound } from '../agents/prompt-tokens';
import { createTokenTask } from '../agents/token-task-registry';
import { LORA_MODULES } from '../models/hf/llama-lora';
import { LORA_RUN_BUDGET_BYTES, planLoraMicroBatches } from '../models/hf/lora-train-plan';
import { type BufferLimits, formatBytes, MemoryPlanError } from '../models/hf/memory-plan';
import { parameterCount, type ModelSpec } from '../models/model-spec';
import type { Tokenizer } from '../models/tokenizer-api';
import { CPU_MAX_PARAMETERS, formatCount, type Backend } from './model-fit';

/** Answers sampled per prompt (GRPO's group), as the page trains. */
export const LORA_GROUP_SIZE = 8;

export interface LoraFitInput {
  spec: ModelSpec;
  tokenizer: Tokenizer;
  /** The task, and the most tokens an answer (a tool task: a turn) may take. */
  task: { name: string; options: Record<string, unknown>; maxNewTokens: number };
  rank: number;
  promptsPerUpdate: number;
  /** The trainer: 'grpo' (its whole family) or 'dpo'. */
  algorithm?: 'grpo' | 'dpo';
  backend: Backend;
  /** The device's limits (webgpu). */
  limits?: BufferLimits;
}

export interface LoraFit {
  ok: boolean;
  /** One sentence: where it trains and what it needs, or why not (with the numbers). */
  text: string;
  /**
   * What a refusal is about: the model itself (no setting of the form helps), or the settings
   * (another task, fewer prompts or a lower rank may fit).
   */
  refused?: 'model' | 'settings';
}

export function loraTrainFit(input: LoraFitInput): LoraFit {
  const { spec, backend } = input;
  const params = parameterCount(spec);
  const task = createTokenTask(input.task.name, input.task.options);
  // The prompt in the chat template (a tool task's with its tools, and room for its calls and
  // results) and one token of answer must fit the model's context.
  const needed = promptLengthBound(input.tokenizer, task) + 1;
  if (needed > spec.context) {
    return {
      ok: false,
      refused: 'settings',
      text: `Refused: '${task.name}' needs a context of ${needed} tokens in this model's chat template (its prompt${isAgentTask(task) ? ', tools, calls and results' : ''} and an answer); the model's is ${spec.context}. Pick another task or a model with a longer context.`,
    };
  }
  if (input.algorithm === 'dpo' && isAgentTask(task)) {
    return {
      ok: false,
      refused: 'settings',
      text: `Refused: '${task.name}' is a tool task, and DPO pairs single-turn answers; train it with GRPO or one of its settings.`,
    };
  }
  if (backend === 'cpu') {
    if (params > CPU_MAX_PARAMETERS) {
      return {
        ok: false,
        refused: 'model',
        text: `Training runs on the CPU here (no WebGPU), which takes models up to ${formatCount(CPU_MAX_PARAMETERS)} parameters; this one has ${formatCount(params)}.`,
      };
    }
    return { ok: true, text: 'Trains on the CPU (f32 weights), each run in a worker of its own.' };
  }
  const batch = input.promptsPerUpdate * LORA_GROUP_SIZE;
  const seq = Math.min(spec.context, needed - 1 + input.task.maxNewTokens);
  const lora = { rank: input.rank, alpha: 2 * input.rank, targets: [...LORA_MODULES] };
  const limits = input.limits ?? {
    maxBufferSize: Number.MAX_SAFE_INTEGER,
    maxStorageBufferBindingSize: Number.MAX_SAFE_INTEGER,
  };
  try {
    const budgetBytes = LORA_RUN_BUDGET_BYTES;
    const plan = planLoraMicroBatches(spec, {
      storage: 'f16',
      lora,
      batch,
      seq,
      limits,
      budgetBytes,
    });
    const micro = plan.microBatch;
    const slices =
      micro < batch
        ? ` Each step runs in micro-batches of ${micro} answers (its ${batch} do not fit ${formatBytes(budgetBytes)} at once): the same update, slower.`
        : '';
    return {
      ok: true,
      text: `Trains on the GPU, each run on a device of its own: ${formatBytes(plan.totalBytes)} per run (weights ${formatBytes(plan.weightBytes)} as f16, adapters and AdamW ${formatBytes(plan.adapterBytes)}, activations kept for ${micro} answers × ${seq} tokens ${formatBytes(plan.activationBytes)}, logits ${formatBytes(plan.logitBytes)}).${slices}`,
    };
  } catch (error) {
    if (!(error instanceof MemoryPlanError)) throw error;
    return { ok: false, refused: 'settings', text: `Refused: ${error.message}.` };
  }
}
