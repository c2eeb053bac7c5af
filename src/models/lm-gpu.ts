/**
 * The tiny GPT language model on WebGPU: its parameters are one trainable group, 'base', held in
 * one flat f32 buffer (TransformerGpu's) with one gradient buffer and one AdamW state. Its steps —
 * one command encoder each, metrics read in bulk — are lm-gpu-steps.ts's, shared with the Llama
 * family's LoRA model.
 */
import type { GpuContext } from '../gpu/context';
import type { GenerateRequest, Generation } from './generate';
import { generateGpu } from './generate-gpu';
import type {
  GptLanguageModel,
  OptimizerSnapshot,
  StepMetrics,
  TokenScores,
} from './language-model';
import { GpuLmSteps } from './lm-gpu-steps';
import { fromTransformerConfig, type ModelSpec } from './model-spec';
import type { OptimizerConfig } from './optimizer';
import {
  groupNamed,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from './param-groups';
import type { PolicyStepRequest, PolicyStepResult } from './policy-step-request';
import type { SequenceBatch } from './sequence-batch';
import type { TransformerConfig } from './transformer-config';
import { TransformerGpu, type TransformerWorkspace } from './transformer-gpu';
import { transformerParamGroups } from './transformer-params';

export { METRICS_CAPACITY } from './lm-gpu-steps';

export class GpuLanguageModel implements GptLanguageModel {
  readonly backend = 'webgpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  readonly model: TransformerGpu;
  private readonly steps: GpuLmSteps<TransformerWorkspace>;

  constructor(
    readonly gpu: GpuContext,
    readonly config: TransformerConfig,
    params: Float32Array,
  ) {
    this.spec = fromTransformerConfig(config);
    this.groups = transformerParamGroups(config);
    const model = new TransformerGpu(gpu, config, params);
    this.model = model;
    const trained = { params: model.params, grads: model.grads, layout: model.layout };
    this.steps = new GpuLmSteps(gpu, config.vocab, model, trained, 'GpuLanguageModel');
  }

  /** The 'base' group's layout: the whole model. */
  get layout() {
    return this.model.layout;
  }

  trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void> {
    return this.steps.trainCrossEntropy(batch, optimizer);
  }

  scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores> {
    return this.steps.scoreTokens(tokens, targets, batch, seq, temperature);
  }

  backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    dValues?: Float32Array,
  ): Promise<void> {
    return this.steps.backwardFromLogp(dLogp, dEntropy, optimizer, dValues);
  }

  policyStep(request: PolicyStepRequest): Promise<PolicyStepResult> {
    return this.steps.policyStep(request);
  }

  takeMetrics(): Promise<StepMetrics[]> {
    return this.steps.takeMetrics();
  }

  logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    return this.steps.logits(tokens, batch, seq);
  }

  generate(request: GenerateRequest): Promise<Generation> {
    return generateGpu(this.model, request);
  }

  async readParams(group: ParamGroupName = 'base'): Promise<Float32Array> {
    groupNamed(this.groups, group);
    return this.model.readParams();
  }

  writeParams(params: Float32Array, group: ParamGroupName = 'base'): void {
    groupNamed(this.groups, group);
    this.model.writeParams(params);
  }

  async readOptimizer(group: ParamGroupName = 'base'): Promise<OptimizerSnapshot> {
    trainableGroupNamed(this.groups, group);
    return this.steps.readOptimizer();
  }

  writeOptimizer(snapshot: OptimizerSnapshot, group: ParamGroupName = 'base'): void {
    trainableGroupNamed(this.groups, group);
    this.steps.writeOptimizer(snapshot);
  }

  dispose(): void {
    this.steps.release();
    this.model.release();
  }
}
