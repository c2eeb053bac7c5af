/**
 * What "Bring a model" shows before a model loads, and whether it may load: the architecture as
 * rows, the memory plan at f16 and f32 for the chat's context, and the verdict for the backend.
 * Pure functions of the spec and the adapter's limits, tested without a DOM or a GPU.
 *
 * The CPU bound: the CPU path keeps every weight as f32 in the tab's memory and runs one matrix
 * multiply per weight per generated token in plain JavaScript. On a laptop core that is about
 * 0.5–1 GFLOP/s, so a 50M-parameter model (≈ 100 MFLOP a token) writes roughly 5–10 tokens a
 * second and holds 200 MB of weights; SmolLM2-135M would be 3× slower and 540 MB. 50M is where a
 * chat still answers in seconds and a tab's memory is safe, so larger models need WebGPU.
 */
import {
  bindingPartLimit,
  formatBytes,
  MemoryPlanError,
  planMemory,
  type BufferLimits,
  type MemoryPlan,
} from '../models/hf/memory-plan';
import { parameterCount, type ModelSpec } from '../models/model-spec';

/** The largest model the CPU fallback loads (parameters); why: see above. */
export const CPU_MAX_PARAMETERS = 50_000_000;

/** Positions the chat keeps per conversation (prompt + answer), at most the model's context. */
export const CHAT_CONTEXT = 2048;

/** The chat's KV cache length for a model: its context, capped at CHAT_CONTEXT. */
export function chatContext(spec: ModelSpec): number {
  return Math.min(spec.context, CHAT_CONTEXT);
}

/** "134,515,008" → "134.5M"; small counts stay whole. */
export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** The architecture as label/value rows, in the order people compare models by. */
export function architectureRows(spec: ModelSpec): [string, string][] {
  return [
    ['Family', spec.family],
    ['Layers', String(spec.layers)],
    ['Width', String(spec.width)],
    ['Heads / KV heads', `${spec.heads} / ${spec.kvHeads}`],
    ['Head size', String(spec.headDim)],
    ['MLP width', String(spec.mlpWidth)],
    ['Vocabulary', spec.vocab.toLocaleString('en-US')],
    ['Context', spec.context.toLocaleString('en-US')],
    ['Rotary base', String(spec.rotaryBase)],
    ['Tied embeddings', spec.tiedEmbeddings ? 'yes' : 'no'],
    [
      'Parameters',
      `${formatCount(parameterCount(spec))} (${parameterCount(spec).toLocaleString('en-US')})`,
    ],
  ];
}

export type Backend = 'webgpu' | 'cpu';

export interface FitInput {
  spec: ModelSpec;
  backend: Backend;
  /** The GPU device's limits (webgpu only). */
  limits?: BufferLimits;
}

export interface PlanRow {
  storage: 'f16' | 'f32';
  plan: MemoryPlan | undefined;
  /** Why the plan cannot be made (a tensor or the KV cache over a binding). */
  error: string | undefined;
}

export interface Fit {
  ok: boolean;
  /** One sentence: what will load where, or why not (with the numbers). */
  reason: string;
  /** The memory plan at f16 and f32, batch 1 and the chat's context. */
  plans: PlanRow[];
}

function planRow(spec: ModelSpec, storage: 'f16' | 'f32', limits: BufferLimits): PlanRow {
  try {
    const plan = planMemory(spec, { storage, batch: 1, context: chatContext(spec), limits });
    return { storage, plan, error: undefined };
  } catch (error) {
    if (error instanceof MemoryPlanError) return { storage, plan: undefined, error: error.message };
    throw error;
  }
}

/**
 * Whether `spec` loads on `backend`. WebGPU: f16 storage; a matrix over the device's
 * maxStorageBufferBindingSize (or maxBufferSize) is split by rows into parts that each fit (the
 * GPU loader does as the plan counts), which the verdict says; a model is refused where the plan
 * cannot fit (one row, or one layer's KV cache, over a binding). CPU: up to CPU_MAX_PARAMETERS.
 */
export function checkFit({ spec, backend, limits }: FitInput): Fit {
  const planLimits = limits ?? {
    maxBufferSize: Number.MAX_SAFE_INTEGER,
    maxStorageBufferBindingSize: Number.MAX_SAFE_INTEGER,
  };
  const plans = (['f16', 'f32'] as const).map((s) => planRow(spec, s, planLimits));
  const params = parameterCount(spec);
  if (backend === 'cpu') {
    if (params > CPU_MAX_PARAMETERS) {
      return {
        ok: false,
        plans,
        reason: `The CPU fallback takes models up to ${formatCount(CPU_MAX_PARAMETERS)} parameters; this one has ${formatCount(params)}. On the CPU every token multiplies all ${formatCount(params)} weights in plain JavaScript (a few tokens a second at 50M) and holds them as f32 (${formatBytes(params * 4)}); load it where WebGPU is available.`,
      };
    }
    const f32 = plans[1]!.plan!;
    return {
      ok: true,
      plans,
      reason: `Loads on the CPU as f32: ${formatBytes(f32.weightBytes)} of weights, ${formatBytes(f32.kvCacheBytes)} of KV cache for ${chatContext(spec)} positions.`,
    };
  }
  const f16 = plans[0]!;
  if (!f16.plan) return { ok: false, plans, reason: `Refused: ${f16.error!}` };
  const splits = splitNote(f16.plan, limits);
  return {
    ok: true,
    plans,
    reason: `Loads on the GPU as f16: ${formatBytes(f16.plan.totalBytes)} in all (weights ${formatBytes(f16.plan.weightBytes)}, KV cache ${formatBytes(f16.plan.kvCacheBytes)} for ${chatContext(spec)} positions, activations ${formatBytes(f16.plan.activationBytes)}).${splits}`,
  };
}

/** " model.embed_tokens.weight (272 MB) is held in 3 parts, …", or "" where nothing splits. */
function splitNote(plan: MemoryPlan, limits: BufferLimits | undefined): string {
  const first = plan.splits[0];
  if (!first || !limits) return '';
  const more = plan.splits.length > 1 ? ` (and ${plan.splits.length - 1} more tensors)` : '';
  return ` ${first.name} (${formatBytes(first.bytes)}) is held in ${first.parts} parts of up to ${first.rowsPerPart.toLocaleString('en-US')} rows${more}, each within the ${formatBytes(bindingPartLimit(limits))} one GPU buffer binding may hold on this device.`;
}
