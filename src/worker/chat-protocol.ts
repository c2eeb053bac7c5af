/**
 * The CPU chat of "Bring a model" in a worker of its own (chat.worker.ts, chat-api.ts), so that a
 * CPU answer never holds the page: the page reads the weights (its progress bar moves between
 * tensors), moves them here, and asks for answers.
 */
import type { LlamaGenerated, LlamaGenerateOptions } from '../models/hf/llama-cpu-generate';
import type { ModelSpec } from '../models/model-spec';

/** Sampling settings of one answer: LlamaGenerateOptions without adapters (the chat has none). */
export type ChatSampling = Omit<LlamaGenerateOptions, 'lora'>;

export interface ChatWorkerApi {
  /**
   * Takes the model: `base` is every weight in the 'base' group's f32 layout (llamaModelFromBase),
   * moved, not copied. A later open replaces the model.
   */
  open(spec: ModelSpec, base: Float32Array): Promise<void>;
  /** The new tokens for each prompt (token ids) from the opened model. */
  generate(prompts: Int32Array[], sampling: ChatSampling): Promise<LlamaGenerated>;
}
