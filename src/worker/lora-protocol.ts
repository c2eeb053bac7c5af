/**
 * The LoRA worker's interface (src/worker/lora.worker.ts): one LoRA-GRPO run on a brought model,
 * off the page's thread. The page sends the model's f32 weights (transferred, not copied) and its
 * tokenizer files; the worker trains update by update and reports each one.
 */
import type { HfTokenizerFiles } from '../models/hf/hf-tokenizer';
import type { ModelSpec } from '../models/model-spec';

export interface LoraRunRequest {
  /** The model's name for people (a Hub id, a folder): adapter_config.json's base model. */
  source: string;
  spec: ModelSpec;
  /** Every base weight in the 'base' group's f32 layout. */
  base: Float32Array;
  tokenizer: HfTokenizerFiles;
  task: { name: string; options: Record<string, unknown> };
  rank: number;
  alpha: number;
  lr: number;
  promptsPerUpdate: number;
  groupSize: number;
  maxNewTokens: number;
  seed: number;
  /**
   * Where it trains: 'webgpu' (the worker opens its own device, the base stored as f16; a plan
   * over the device's limits is refused with the numbers) or 'cpu' (f32).
   */
  backend: 'webgpu' | 'cpu';
}

/** What the worker reports after each update, and at the held-out checks. */
export interface LoraRunReport {
  /** Updates done. */
  update: number;
  /** This update's batch strict accuracy (reward/strict_accuracy). */
  strictAccuracy: number;
  /** Held-out strict success, at update 0 and every `heldOutEvery` updates. */
  heldOut?: number;
  seconds: number;
}

export interface LoraWorkerApi {
  /**
   * Builds the run; returns the number of adapter parameters and where it runs (for people).
   * Throws on bad input, naming it.
   */
  open(request: LoraRunRequest): Promise<{ parameters: number; device: string }>;
  /** Held-out strict success before any update (the starting point both runs share). */
  heldOut(): Promise<number>;
  /** One update; with `heldOut`, the held-out measure after it too. */
  update(heldOut: boolean): Promise<LoraRunReport>;
  /** The adapters as PEFT saves them. */
  adapter(): Promise<{ config: string; weights: Uint8Array }>;
}
