/**
 * The LoRA worker's interface (src/worker/lora.worker.ts): one LoRA-GRPO run on a brought model,
 * off the page's thread. The page sends the model's f32 weights (transferred, not copied) and its
 * tokenizer files; the worker trains update by update and reports each one.
 */
import type { HfTokenizerFiles } from '../models/hf/hf-tokenizer';
import type { ModelSpec } from '../models/model-spec';
import type { SampleInspection } from '../rl/inspection';
import type { LoraRecipeId } from './lora-recipes';
import { isRecord } from '../util/json-checks';
import { checkpointProblem, type RunCheckpoint } from './run-checkpoint';

export interface LoraRunRequest {
  /** The model's name for people (a Hub id, a folder): adapter_config.json's base model. */
  source: string;
  spec: ModelSpec;
  /** Every base weight in the 'base' group's f32 layout. */
  base: Float32Array;
  /** `base`'s fingerprint (src/models/weights-fingerprint.ts), which its checkpoints carry. */
  fingerprint: string;
  tokenizer: HfTokenizerFiles;
  task: { name: string; options: Record<string, unknown> };
  /** Which of the GRPO family trains it (lora-recipes.ts); GRPO when left out. */
  recipe?: LoraRecipeId;
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
  /** Settings a live change set for this update (the trainer's 'hyperparams' event). */
  changes?: Record<string, number | boolean | string>;
}

/**
 * A LoRA run between two updates, as the page keeps it across reloads: the adapters and their
 * AdamW state with the trainer's (a RunCheckpoint whose policy is the 'lora' group alone), and the
 * base they belong to, named and fingerprinted — never the base's weights themselves.
 */
export interface LoraCheckpoint {
  base: { source: string; fingerprint: string };
  lora: { rank: number; alpha: number; targets: string[] };
  run: RunCheckpoint;
  /** Seconds spent training so far. */
  seconds: number;
}

/** What is wrong with `value` as a LoraCheckpoint, or undefined. Never throws. */
export function loraCheckpointProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'is not an object';
  const { base, lora, run, seconds } = value;
  if (!isRecord(base) || typeof base.source !== 'string' || typeof base.fingerprint !== 'string') {
    return 'base must name its source and fingerprint';
  }
  if (
    !isRecord(lora) ||
    !Number.isInteger(lora.rank) ||
    typeof lora.alpha !== 'number' ||
    !Array.isArray(lora.targets) ||
    !lora.targets.every((t) => typeof t === 'string')
  ) {
    return 'lora must give rank, alpha and targets';
  }
  if (typeof seconds !== 'number' || !(seconds >= 0)) return 'seconds must be a number ≥ 0';
  const problem = checkpointProblem(run);
  return problem === undefined ? undefined : `run: ${problem}`;
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
  /**
   * Changes live settings (say lr) from the next update on; the trainer checks them and throws,
   * naming the setting and its range, changing nothing, for a bad value or one not live.
   */
  setHyperparams(changes: Record<string, number | boolean | string>): Promise<void>;
  /** The last update's samples token by token (the lab's inspection), or null before one. */
  inspect(): Promise<SampleInspection | null>;
  /** The run now, to go on from later (between updates only). */
  checkpoint(): Promise<LoraCheckpoint>;
  /**
   * Goes on from `checkpoint` (after open() with the same base, task and settings): the next
   * update is the one the saved run would have made. Refuses, naming what differs and changing
   * nothing, a checkpoint of another base (its fingerprint) or other adapters.
   */
  resume(checkpoint: LoraCheckpoint): Promise<void>;
  /** The adapters as PEFT saves them. */
  adapter(): Promise<{ config: string; weights: Uint8Array }>;
}
