/**
 * A brought Llama-family model (Llama, Qwen2, Qwen3) as a LanguageModel on WebGPU: the twin of
 * llama-lm-cpu.ts, so that the lab's trainers run on the user's GPU unchanged.
 *
 * Two parameter groups: the frozen 'base' (the weights on the GPU in f16 or f32 storage; no
 * gradient, no optimizer state, no copy kept on the CPU) and the trainable 'lora' group, one f32
 * buffer with its gradient buffer and AdamW state, the only one a step updates. The steps are
 * lm-gpu-steps.ts's (one command encoder per step, metrics read in bulk, the RL loss on the GPU),
 * over a network whose forward keeps the activations and whose backward reaches the adapters
 * alone (llama-gpu-train.ts). `withoutAdapters()` is the same weights with the adapters off: the
 * KL reference of a LoRA run, with no second copy of the base.
 */
import type { CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { OpInputError } from '../../ops/errors';
import { checkInt } from '../../ops/validate';
import type { GenerateRequest, Generation } from '../generate';
import type { LanguageModel, OptimizerSnapshot } from '../language-model';
import { GpuLmSteps, GpuStepsModel, type GpuNetwork, type GpuPassWorkspace } from '../lm-gpu-steps';
import type { ModelSpec } from '../model-spec';
import type { OptimizerConfig } from '../optimizer';
import {
  groupNamed,
  paramGroups,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from '../param-groups';
import type { PolicyStepRequest, PolicyStepResult } from '../policy-step-request';
import { hfBaseGroup } from './hf-weights';
import { generateByBudget } from './llama-generate-request';
import { llamaGenerateGpu } from './llama-gpu-generate';
import { type LlamaGpuLora, uploadLlamaLora } from './llama-gpu-lora';
import { LlamaScoringNetwork } from './llama-gpu-scoring';
import { LlamaLoraPass } from './llama-gpu-train';
import type { LlamaGpuWeights } from './llama-gpu-weights';
import type { LlamaLora } from './llama-lora';

const OP = 'llamaLmGpu';

/** Passes kept at once: a micro-batched step alternates between its slices' size and the last's. */
const KEPT_PASSES = 2;

/** The network the steps train: a LlamaLoraPass per (B, T), the most recent KEPT_PASSES kept. */
class LlamaGpuNetwork implements GpuNetwork<LlamaLoraPass> {
  private passes: LlamaLoraPass[] = [];

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: LlamaGpuWeights,
    private readonly adapters: LlamaGpuLora | undefined,
    /** Where the adapters' gradients go ((adapters.layout.total) f32). */
    private readonly grads: GPUBuffer | undefined,
  ) {}

  writeTokens(tokens: Int32Array, batch: number, seq: number): LlamaLoraPass {
    let pass = this.passes.find((p) => p.batch === batch && p.seq === seq);
    if (!pass) {
      if (this.passes.length >= KEPT_PASSES) this.passes.shift()!.release();
      pass = new LlamaLoraPass(this.gpu, this.weights, this.adapters, batch, seq);
      this.passes.push(pass);
    }
    pass.writeTokens(tokens);
    return pass;
  }

  encodeForward(pass: CommandBatch, ws: LlamaLoraPass): Promise<void> {
    return ws.recordForward(pass);
  }

  encodeBackward(
    step: CommandBatch,
    ws: LlamaLoraPass,
    dLogits: GPUBuffer,
    dValues?: GPUBuffer,
    accumulate = false,
  ): Promise<void> {
    if (dValues) throw new OpInputError(OP, 'dValues', 'given, but this model has no value head');
    if (!this.grads) throw new OpInputError(OP, 'adapters', 'none: this model is frozen');
    return ws.recordBackward(step, dLogits, this.grads, accumulate);
  }

  release(): void {
    for (const pass of this.passes.splice(0)) pass.release();
  }
}

export class LlamaGpuLanguageModel
  extends GpuStepsModel<GpuPassWorkspace>
  implements LanguageModel
{
  readonly backend = 'webgpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  private readonly adapters: LlamaGpuLora | undefined;
  private readonly grads: GPUBuffer | undefined;
  private readonly network: LlamaGpuNetwork | LlamaScoringNetwork;
  protected readonly steps: GpuLmSteps<GpuPassWorkspace>;

  /**
   * `weights`: the base on the GPU (released with this model unless `ownsWeights` is false).
   * `lora`: adapters to train (uploaded; the CPU object is not kept), or none (a frozen model).
   * `microBatch`: the most sequences a forward and backward take at once (lm-gpu-steps.ts's
   * MicroBatching); none: a step's whole batch at once.
   */
  constructor(
    readonly gpu: GpuContext,
    private readonly weights: LlamaGpuWeights,
    lora?: LlamaLora,
    private readonly options: { ownsWeights?: boolean; microBatch?: number } = {},
  ) {
    super();
    this.spec = weights.spec;
    const baseGroup = hfBaseGroup(weights.spec, weights.storage);
    this.groups = lora ? paramGroups([baseGroup, lora.group]) : Object.freeze([baseGroup]);
    this.adapters = lora && uploadLlamaLora(gpu, weights.spec, lora);
    const total = lora?.group.layout.total ?? 0;
    this.grads = lora && gpu.storage(Math.max(1, total) * 4, 'lora grads');
    // A frozen model (the KL reference) scores only: no activations kept for a backward.
    this.network = lora
      ? new LlamaGpuNetwork(gpu, weights, this.adapters, this.grads)
      : new LlamaScoringNetwork(gpu, weights);
    const trained =
      this.adapters && this.grads
        ? { params: this.adapters.params, grads: this.grads, layout: lora!.group.layout }
        : undefined;
    const { microBatch } = options;
    if (microBatch !== undefined) checkInt(OP, 'microBatch', microBatch, 1, 65_536);
    const micro = microBatch === undefined ? undefined : { sequences: microBatch };
    const network: GpuNetwork<GpuPassWorkspace> = this.network;
    this.steps = new GpuLmSteps(gpu, weights.spec.vocab, network, trained, OP, micro);
  }

  /** The same weights with the adapters off: the KL reference, sharing the base (frozen). */
  withoutAdapters(): LlamaGpuLanguageModel {
    return new LlamaGpuLanguageModel(this.gpu, this.weights, undefined, {
      ...this.options,
      ownsWeights: false,
    });
  }

  /** No value head: ∂L/∂V is refused by name. */
  override backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    dValues?: Float32Array,
  ): Promise<void> {
    if (dValues) throw new OpInputError(OP, 'dValues', 'given, but this model has no value head');
    return super.backwardFromLogp(dLogp, dEntropy, optimizer);
  }

  override policyStep(request: PolicyStepRequest): Promise<PolicyStepResult> {
    if (request.value) {
      throw new OpInputError(OP, 'value', 'given, but this model has no value head');
    }
    return super.policyStep(request);
  }

  /** The lab's generation contract on the GPU's KV-cached sampler (llama-generate-request.ts). */
  generate(request: GenerateRequest): Promise<Generation> {
    return generateByBudget(OP, this.spec, request, (prompts, options) =>
      llamaGenerateGpu(this.gpu, this.weights, prompts, {
        ...options,
        ...(this.adapters ? { lora: this.adapters } : {}),
      }),
    );
  }

  /** The adapters ('lora'); the base stays on the GPU as loaded (read it from the model's files). */
  async readParams(group: ParamGroupName = 'base'): Promise<Float32Array> {
    groupNamed(this.groups, group);
    if (group !== 'lora' || !this.adapters) {
      throw new OpInputError(
        OP,
        'group',
        `'${group}' stays on the GPU as loaded and is not read back; read the model's files`,
      );
    }
    return this.gpu.readF32(this.adapters.params, this.adapters.layout.total);
  }

  /** Replaces the adapters; the base is the user's model and stays as loaded. */
  writeParams(params: Float32Array, group: ParamGroupName = 'base'): void {
    trainableGroupNamed(this.groups, group);
    const total = this.adapters!.layout.total;
    if (params.length !== total) {
      throw new OpInputError(
        OP,
        'params',
        `must have the 'lora' group's ${total} floats, got ${params.length}`,
      );
    }
    if (!params.every(Number.isFinite)) throw new OpInputError(OP, 'params', 'must be finite');
    this.adapters!.write(params);
  }

  async readOptimizer(group: ParamGroupName = 'lora'): Promise<OptimizerSnapshot> {
    trainableGroupNamed(this.groups, group);
    return this.steps.readOptimizer();
  }

  writeOptimizer(snapshot: OptimizerSnapshot, group: ParamGroupName = 'lora'): void {
    trainableGroupNamed(this.groups, group);
    this.steps.writeOptimizer(snapshot);
  }

  dispose(): void {
    this.steps.release();
    this.network.release();
    this.adapters?.release();
    if (this.grads) this.gpu.pool.release(this.grads);
    if (this.options.ownsWeights !== false) this.weights.release();
  }
}
