/**
 * One LoRA-GRPO run on a brought model, as the lab's page, its benchmark and its tests run it: the
 * model's weights as the frozen base (f32 on the CPU, or on the GPU through `policy`), fresh
 * adapters (PEFT's initialisation, seeded), the
 * task's prompts in the model's chat template, the lab's GRPO trainer (src/rl/grpo.ts) unchanged,
 * and a held-out measure — strict success of sampled answers on fixed prompts, the same prompts and
 * sampler seed at every call and in every run, so that two runs differ only in what training did.
 */
import type { ChatTokenizer } from '../agents/chat-task';
import type { TokenTask } from '../envs/token-tasks/types';
import { LlamaCpuLanguageModel } from '../models/hf/llama-lm-cpu';
import type { LlamaGpuLanguageModel } from '../models/hf/llama-lm-gpu';
import {
  createLlamaLora,
  llamaLoraFromParams,
  type LlamaLora,
  type LoraSettings,
} from '../models/hf/llama-lora';
import { adapterConfigText, adapterWeightsBytes } from '../models/hf/peft-adapter';
import type { OptimizerSnapshot } from '../models/language-model';
import type { ModelSpec } from '../models/model-spec';
import { OpInputError } from '../ops/errors';
import { evaluateTask } from './evaluate';
import { createDpoTrainer, DEFAULT_DPO_CONFIG, type DpoConfig, type DpoTrainer } from './dpo';
import { createGrpoTrainer, type GrpoTrainer } from './grpo';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from './grpo-config';
import type { Metrics, TrainerState } from './trainer';

/** A session between two updates: its adapters, their AdamW state and the trainer's own. */
export interface LoraSessionState {
  /** ('lora' group layout.total) the adapters. */
  params: Float32Array;
  optimizer: OptimizerSnapshot;
  trainer: TrainerState;
}

/**
 * The GRPO settings of a LoRA run: the trainer's defaults, then `recipe`'s changes (a variant of
 * the family: src/worker/lora-recipes.ts), then what the page and bench set. The trainer checks
 * the result.
 */
export function loraGrpoConfig(settings: {
  lr: number;
  promptsPerUpdate: number;
  groupSize: number;
  maxNewTokens: number;
  recipe?: Readonly<Record<string, number | string | boolean>>;
}): GrpoConfig {
  const { lr, promptsPerUpdate, groupSize, maxNewTokens, recipe } = settings;
  return {
    ...DEFAULT_GRPO_CONFIG,
    ...(recipe as Partial<GrpoConfig>),
    lr,
    promptsPerUpdate,
    groupSize,
    maxNewTokens,
  };
}

/**
 * The DPO settings of a LoRA run: the trainer's defaults with the run's learning rate, prompts,
 * answers per prompt (the group size: the pool pairs are drawn from) and answer length.
 */
export function loraDpoConfig(settings: {
  lr: number;
  promptsPerUpdate: number;
  groupSize: number;
  maxNewTokens: number;
}): DpoConfig {
  const { lr, promptsPerUpdate, groupSize, maxNewTokens } = settings;
  return { ...DEFAULT_DPO_CONFIG, lr, promptsPerUpdate, samplesPerPrompt: groupSize, maxNewTokens };
}

/** The held-out measure: 64 prompts × 2 sampled answers at the rollout temperature. */
export const HELD_OUT = { samples: 64, repeats: 2, seed: 1234 } as const;

/** A brought model with adapters, on the CPU or the GPU. */
export type LoraPolicy = LlamaCpuLanguageModel | LlamaGpuLanguageModel;

export interface LoraGrpoSessionOptions {
  spec: ModelSpec;
  /**
   * The model to train, given its fresh adapters; default: on the CPU over `base`, every base
   * weight in the 'base' group's f32 layout (used in place, never written).
   */
  policy?: (lora: LlamaLora) => LoraPolicy;
  base?: Float32Array;
  tokenizer: ChatTokenizer;
  task: TokenTask;
  lora: LoraSettings;
  /** GRPO (or a variant of its family) trains it; or, with `dpo` instead, DPO. */
  grpo?: GrpoConfig;
  /** DPO on the model's own successes against its failures, the reference its adapters off. */
  dpo?: DpoConfig;
  seed: number;
}

export class LoraGrpoSession {
  readonly policy: LoraPolicy;
  readonly trainer: GrpoTrainer | DpoTrainer;
  /** DPO's reference: the same weights with the adapters off (no copy of the base). */
  private readonly reference: LoraPolicy | undefined;
  private readonly lora: LlamaLora;

  constructor(private readonly options: LoraGrpoSessionOptions) {
    this.lora = createLlamaLora(options.spec, options.lora, options.seed);
    const { policy, base, spec } = options;
    if (!policy && !base) throw new Error('LoraGrpoSession: give the base weights or a policy');
    this.policy = policy ? policy(this.lora) : new LlamaCpuLanguageModel(spec, base!, this.lora);
    const { tokenizer, task, seed, grpo, dpo } = options;
    if (!grpo === !dpo) throw new Error('LoraGrpoSession: give one of grpo and dpo settings');
    if (dpo) {
      this.reference = this.policy.withoutAdapters();
      const setup = { policy: this.policy, reference: this.reference, tokenizer, task, seed };
      this.trainer = createDpoTrainer(setup, dpo);
    } else {
      this.trainer = createGrpoTrainer({ policy: this.policy, tokenizer, task, seed }, grpo!);
    }
  }

  /** Adapter parameters being trained. */
  get parameters(): number {
    return this.lora.params.length;
  }

  update(): Promise<Metrics> {
    return this.trainer.update();
  }

  /** Updates done. */
  get step(): number {
    return this.trainer.step;
  }

  /** The state to go on from later (restore), read from wherever the model trains. */
  async state(): Promise<LoraSessionState> {
    const [params, optimizer] = await Promise.all([
      this.policy.readParams('lora'),
      this.policy.readOptimizer('lora'),
    ]);
    return { params, optimizer, trainer: this.trainer.saveState!() }; // every LM trainer has it
  }

  /**
   * Goes on from `saved`, taken from a session of the same model, adapters and task: the next
   * update is the one the saved session would have made. Throws, naming the field and changing
   * nothing, on a state that does not fit this session.
   */
  restore(saved: LoraSessionState): void {
    const floats = this.lora.params.length;
    const arrays: [string, Float32Array][] = [
      ['params', saved.params],
      ['optimizer.m', saved.optimizer.m],
      ['optimizer.v', saved.optimizer.v],
    ];
    for (const [field, values] of arrays) {
      if (!(values instanceof Float32Array) || values.length !== floats) {
        throw new OpInputError(
          'LoraGrpoSession.restore',
          field,
          `must hold the adapters' ${floats} floats (r = ${this.lora.settings.rank} on ` +
            `${this.lora.settings.targets.join(', ') || 'no module'}), got ${describeLength(values)}`,
        );
      }
      const bad = values.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) {
        throw new OpInputError('LoraGrpoSession.restore', `${field}[${bad}]`, 'must be finite');
      }
    }
    // Checks the trainer's part first and throws changing nothing (every LM trainer has it).
    this.trainer.loadState!(saved.trainer);
    this.policy.writeParams(saved.params, 'lora');
    this.policy.writeOptimizer(saved.optimizer, 'lora');
  }

  /** Held-out strict success now (see the file comment). */
  async heldOut(): Promise<number> {
    const { tokenizer, task } = this.options;
    const evaluation = await evaluateTask(this.policy, tokenizer, task, {
      ...HELD_OUT,
      sampling: { temperature: this.trainer.config.temperature },
    });
    return evaluation.successRate;
  }

  /** The adapters as PEFT saves them: adapter_config.json and adapter_model.safetensors. */
  async adapterFiles(baseModel: string): Promise<{ config: string; weights: Uint8Array }> {
    const { spec } = this.options;
    const trained = llamaLoraFromParams(
      spec,
      this.lora.settings,
      await this.policy.readParams('lora'),
    );
    return {
      config: adapterConfigText(trained.settings, baseModel),
      weights: adapterWeightsBytes(trained),
    };
  }

  dispose(): void {
    this.reference?.dispose();
    this.policy.dispose();
  }
}

function describeLength(values: unknown): string {
  return values instanceof Float32Array ? `${values.length}` : typeof values;
}
