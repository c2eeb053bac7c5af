/**
 * The tiny GPT language model on WebGPU: its parameters are one trainable group, 'base', held in
 * one flat f32 buffer (TransformerGpu's) with one gradient buffer and one AdamW state. Its steps —
 * one command encoder each, metrics read in bulk — are lm-gpu-steps.ts's, shared with the Llama
 * family's LoRA model.
 */
import type { GpuContext } from '../gpu/context';
import type { GenerateRequest, Generation } from './generate';
import { generateGpu } from './generate-gpu';
import type { GptLanguageModel, OptimizerSnapshot } from './language-model';
import { GpuLmSteps, GpuStepsModel } from './lm-gpu-steps';
import { fromTransformerConfig, type ModelSpec } from './model-spec';
import {
  groupNamed,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from './param-groups';
import type { TransformerConfig } from './transformer-config';
import { TransformerGpu, type TransformerWorkspace } from './transformer-gpu';
import { transformerParamGroups } from './transformer-params';

export { METRICS_CAPACITY } from './lm-gpu-steps';

export class GpuLanguageModel
  extends GpuStepsModel<TransformerWorkspace>
  implements GptLanguageModel
{
  readonly backend = 'webgpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  readonly model: TransformerGpu;
  protected readonly steps: GpuLmSteps<TransformerWorkspace>;

  constructor(
    readonly gpu: GpuContext,
    readonly config: TransformerConfig,
    params: Float32Array,
  ) {
    super();
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
