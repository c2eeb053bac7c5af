/**
 * Where `npm run lm` runs a model: the CPU forward (the default, the lab's reference path) or the
 * GPU one (Dawn in Node) with the weights stored as f16 or f32 — so the GPU path's numbers can be
 * checked against another implementation by the same command.
 */
import { acquireForChoice, describeAdapter, type GpuContext } from '../gpu';
import { llamaScore } from '../models/hf/llama-cpu';
import {
  type LlamaGenerated,
  llamaGenerate,
  type LlamaGenerateOptions,
} from '../models/hf/llama-cpu-generate';
import type { LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import { llamaScoreGpu } from '../models/hf/llama-gpu';
import { llamaGenerateGpu } from '../models/hf/llama-gpu-generate';
import { uploadLlamaLora } from '../models/hf/llama-gpu-lora';
import { type GpuWeightStorage, llamaGpuWeightsFromCpu } from '../models/hf/llama-gpu-weights';
import type { LlamaLora } from '../models/hf/llama-lora';
import { FlagError } from './args';

export const LM_BACKENDS = ['cpu', 'webgpu'] as const;
export type LmBackend = (typeof LM_BACKENDS)[number];
export const LM_STORAGES = ['f16', 'f32'] as const;

export interface LmRunner {
  /** What ran: 'cpu', or 'webgpu' with the storage, e.g. for the score JSON. */
  backend: LmBackend;
  storage: GpuWeightStorage | undefined;
  /** The adapter's line for stderr, e.g. "WebGPU: nvidia …". */
  description: string;
  score(ids: Int32Array): Promise<Float32Array>;
  generate(
    prompts: Int32Array[],
    options: Omit<LlamaGenerateOptions, 'lora'>,
  ): Promise<LlamaGenerated>;
  dispose(): void;
}

function cpuRunner(model: LlamaCpuModel, lora: LlamaLora | undefined): LmRunner {
  return {
    backend: 'cpu',
    storage: undefined,
    description: 'CPU',
    score: (ids) => Promise.resolve(llamaScore(model, ids, 1, ids.length, { lora }).logprobs),
    generate: (prompts, options) =>
      Promise.resolve(llamaGenerate(model, prompts, { ...options, lora })),
    dispose: () => {},
  };
}

function gpuRunner(
  gpu: GpuContext,
  model: LlamaCpuModel,
  storage: GpuWeightStorage,
  lora: LlamaLora | undefined,
): LmRunner {
  const weights = llamaGpuWeightsFromCpu(gpu, model, storage);
  const adapters = lora ? uploadLlamaLora(gpu, model.spec, lora) : undefined;
  return {
    backend: 'webgpu',
    storage,
    description: `WebGPU: ${describeAdapter(gpu.summary)}`,
    score: (ids) => llamaScoreGpu(gpu, weights, ids, 1, ids.length, { lora: adapters }),
    generate: (prompts, options) =>
      llamaGenerateGpu(gpu, weights, prompts, { ...options, lora: adapters }),
    dispose: () => {
      adapters?.release();
      weights.release();
      gpu.destroy();
    },
  };
}

/** The runner for --backend and --storage; --storage applies to webgpu only. */
export async function lmRunner(
  backend: LmBackend,
  storage: GpuWeightStorage | undefined,
  model: LlamaCpuModel,
  lora: LlamaLora | undefined,
): Promise<LmRunner> {
  if (backend === 'cpu') {
    if (storage !== undefined) {
      throw new FlagError(
        'storage',
        '--storage applies to --backend=webgpu only (the CPU runs f32)',
      );
    }
    return cpuRunner(model, lora);
  }
  // Real models' embeddings pass WebGPU's default 128 MiB binding: ask for the adapter's limits.
  const found = await acquireForChoice('webgpu', '--backend=webgpu', { limits: 'adapter' });
  if (!found.ok)
    throw new FlagError('backend', `--backend=webgpu, but no adapter: ${found.reason.message}`);
  return gpuRunner(found.gpu, model, storage ?? 'f16', lora);
}
