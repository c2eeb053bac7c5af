/**
 * The GPU memory a LoRA training step of a brought model needs, stated before a run starts, and a
 * run that will not fit refused with the numbers and the setting to change. Counted as the GPU
 * model allocates it (llama-lm-gpu.ts over llama-gpu-train.ts; a test checks the count against the
 * buffers a pass actually requests):
 *
 * - weights: the frozen base at its storage dtype (memory-plan.ts's packing);
 * - adapters: the 'lora' group, its gradient and AdamW's two moments (4 × f32 per parameter);
 * - kept activations: per layer, for N = B·T rows, everything the backward reads — x, xMid,
 *   both norms' outputs and rstds, q, k, v (and Qwen3's normed q, k and their rstds), rotated
 *   q, k, the attention output, gate, up, h, each adapter's u (N·r) — and the attention
 *   probabilities (B, NH, T, T), plus the last block's output and the final norm;
 * - backward scratch: the residual's, norms', MLP's and attention's gradients, reused by every
 *   layer, and the attention scores' gradient (B, NH, T, T);
 * - logits: the logits and their gradient (N, V) each, the largest single buffers of a step.
 *
 * One step takes every row of an update's batch at once (GRPO: prompts × group size), so the
 * settings that shrink it are the prompts per update, the group size and the tokens per answer.
 */
import { parameterCount, type ModelSpec } from '../model-spec';
import { type LoraSettings, loraParamLayout } from './llama-lora';
import { bindingPartLimit, type BufferLimits, formatBytes, MemoryPlanError } from './memory-plan';

export interface LoraTrainRequest {
  storage: 'f16' | 'f32';
  lora: LoraSettings;
  /** Sequences in one step (GRPO: prompts per update × group size). */
  batch: number;
  /**
   * The most sequences one forward and backward take at once (lm-gpu-steps.ts's micro-batches);
   * default: the whole batch. Activations, scratch and logits are a micro-batch's; the per-token
   * rows of the loss stay the whole batch's.
   */
  microBatch?: number;
  /** Positions per sequence (prompt + answer). */
  seq: number;
  limits: BufferLimits;
  /** Refuse a plan over this many bytes (what the device is known or assumed to have). */
  budgetBytes?: number;
}

export interface LoraTrainPlan {
  /** Sequences per forward and backward. */
  microBatch: number;
  weightBytes: number;
  /** Adapters, their gradient and AdamW's m and v. */
  adapterBytes: number;
  /** What the forward keeps for the backward. */
  activationBytes: number;
  /** The backward's scratch, reused by every layer. */
  scratchBytes: number;
  /** Logits and their gradient. */
  logitBytes: number;
  /** The largest single buffer: it must fit one storage binding. */
  largest: { name: string; bytes: number };
  totalBytes: number;
}

const F32 = 4;

/**
 * What one of the page's LoRA runs plans to use at most: WebGPU says nothing of a device's free
 * memory, and the page runs two (the run and its control) beside the chat's copy of the model, so
 * that 1.5 GB each keeps the three within a 4 GB GPU. Micro-batches shrink a step to fit it.
 */
export const LORA_RUN_BUDGET_BYTES = 1.5e9;

/**
 * f32 values of one step, as [name, count]: what a LlamaLoraPass allocates (kept, scratch and the
 * logits) and the steps' buffers beside it (the logits' gradient, the per-token losses).
 */
export function loraPassFloats(
  spec: ModelSpec,
  lora: LoraSettings,
  batch: number,
  seq: number,
): { kept: [string, number][]; scratch: [string, number][]; logits: [string, number][] } {
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, vocab: V, layers } = spec;
  const N = batch * seq;
  const probs = batch * NH * seq * seq;
  const qk = spec.qkNorm ? 1 : 0;
  const perLayer =
    N * C * 4 + // xMid, xn, xn2, and the block's output (the next block's input)
    N * 2 + // the two norms' rstds
    N * NH * hs * 3 + // q, rotated q, attention output
    N * NKV * hs * 3 + // k, rotated k, v
    // Qwen3's normed q, k and their rstds (elsewhere four one-float stand-ins)
    (qk ? N * NH * hs + N * NKV * hs + N * NH + N * NKV : 4) +
    probs +
    N * F * 3 + // gate, up, h
    lora.targets.length * N * lora.rank; // each adapter's u
  return {
    kept: [
      ['tokens, positions', 2 * N],
      ['rotary table', seq * hs],
      ['embedding output', N * C],
      [`activations of ${layers} layers`, layers * perLayer],
      ['final norm', N * C + N],
      ['residual branch', N * C],
    ],
    scratch: [
      ['residual, norm and head gradients', 3 * N * C],
      ['MLP gradients', 3 * N * F],
      ['attention gradients', N * NH * hs * 2 + N * NKV * hs * 2],
      ['Qwen3 q/k norm gradients', qk ? N * NH * hs + N * NKV * hs : 2],
      ['attention score gradients', probs],
      ['LoRA scratch', 2 * N * lora.rank],
    ],
    logits: [
      ['logits', N * V],
      // The steps' (lm-gpu-steps.ts): ∂L/∂logits and six per-token rows (targets, log-probs, …).
      ['logit gradients and per-token losses', N * V + 6 * N],
    ],
  };
}

const sum = (rows: [string, number][]) => rows.reduce((a, [, n]) => a + n, 0) * F32;

/** The plan for training `spec`'s adapters; throws MemoryPlanError, with the numbers, if it cannot. */
export function planLoraTraining(spec: ModelSpec, request: LoraTrainRequest): LoraTrainPlan {
  const { batch, seq, limits } = request;
  const micro = request.microBatch ?? batch;
  for (const [name, value, max] of [
    ['batch', batch, 65_536],
    ['seq', seq, spec.context],
    ['microBatch', micro, batch],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new MemoryPlanError(
        `LoRA training plan: ${name} must be an integer in [1, ${max}], got ${value}`,
      );
    }
  }
  const floats = loraPassFloats(spec, request.lora, micro, seq);
  // The loss's per-token rows (targets, log-probs, their gradients) span the whole batch.
  const perTokenRows = micro < batch ? 6 * (batch - micro) * seq * F32 : 0;
  const adapters = loraParamLayout(spec, request.lora).total;
  const weightBytes = parameterCount(spec) * (request.storage === 'f32' ? 4 : 2);
  const plan: LoraTrainPlan = {
    microBatch: micro,
    weightBytes,
    adapterBytes: 4 * adapters * F32,
    activationBytes: sum(floats.kept),
    scratchBytes: sum(floats.scratch),
    logitBytes: sum(floats.logits) + perTokenRows,
    largest: { name: 'logits', bytes: micro * seq * spec.vocab * F32 },
    totalBytes: 0,
  };
  const probs = micro * spec.heads * seq * seq * F32;
  if (probs > plan.largest.bytes) plan.largest = { name: 'attention probabilities', bytes: probs };
  plan.totalBytes =
    plan.weightBytes +
    plan.adapterBytes +
    plan.activationBytes +
    plan.scratchBytes +
    plan.logitBytes;
  const binding = bindingPartLimit(limits);
  const shape = `${micro} answers × ${seq} tokens`;
  const change =
    micro > 1
      ? 'smaller micro-batches, or fewer prompts per update, a smaller group or fewer tokens per answer'
      : 'fewer tokens per answer (one answer per micro-batch already)';
  if (plan.largest.bytes > binding) {
    throw new MemoryPlanError(
      `one training step's ${plan.largest.name} for ${shape} take ${formatBytes(plan.largest.bytes)}, more than the ${formatBytes(binding)} one GPU buffer may hold on this device; choose ${change}`,
    );
  }
  if (request.budgetBytes !== undefined && plan.totalBytes > request.budgetBytes) {
    throw new MemoryPlanError(
      `training needs ${formatBytes(plan.totalBytes)} (weights ${formatBytes(plan.weightBytes)}, adapters and AdamW ${formatBytes(plan.adapterBytes)}, activations kept for ${shape} ${formatBytes(plan.activationBytes)}, backward scratch ${formatBytes(plan.scratchBytes)}, logits ${formatBytes(plan.logitBytes)}), more than the ${formatBytes(request.budgetBytes)} available; choose ${change}`,
    );
  }
  return plan;
}

/**
 * The plan with the largest micro-batch (sequences per forward and backward, at most `batch`)
 * whose buffers fit the device's binding and whose total fits `budgetBytes`: the whole batch where
 * it fits, else slices as large as memory allows. Throws, with the numbers, where not even one
 * sequence at a time fits.
 */
export function planLoraMicroBatches(
  spec: ModelSpec,
  request: Omit<LoraTrainRequest, 'microBatch'> & { budgetBytes: number },
): LoraTrainPlan {
  let lastError: unknown;
  for (let micro = request.batch; micro >= 1; micro = micro > 1 ? Math.ceil(micro / 2) : 0) {
    try {
      return planLoraTraining(spec, { ...request, microBatch: micro });
    } catch (error) {
      if (!(error instanceof MemoryPlanError)) throw error;
      lastError = error;
      if (micro === 1) break;
    }
  }
  throw lastError;
}
