/**
 * The tiny GPT language model on the CPU (the fallback where WebGPU is missing): float32
 * parameters in one trainable group, 'base', the CPU ops for every layer, the same optimizer rule
 * as the GPU.
 */
import { tokenLogprobs, tokenLogprobsBackward } from '../ops/token-logprobs';
import type { SequenceBatch } from './sequence-batch';
import { generateCpu, type GenerateRequest, type Generation } from './generate';
import {
  crossEntropyLogpGrad,
  type GptLanguageModel,
  type OptimizerSnapshot,
  type StepMetrics,
  type TokenScores,
} from './language-model';
import {
  cpuOptimizerFrom,
  CpuOptimizerState,
  optimizerStepCpu,
  skippedStep,
  type OptimizerConfig,
} from './optimizer';
import { fromTransformerConfig, type ModelSpec } from './model-spec';
import {
  groupNamed,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from './param-groups';
import type { ParamLayout } from './param-layout';
import type { TransformerConfig } from './transformer-config';
import { transformerBackward, transformerForward, type TransformerOutput } from './transformer-cpu';
import { transformerParamGroups } from './transformer-params';

export class CpuLanguageModel implements GptLanguageModel {
  readonly backend = 'cpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  /** The 'base' group's layout: the whole model. */
  readonly layout: ParamLayout;
  private params: Float32Array;
  private optimizer: CpuOptimizerState<Float32Array>;
  private pending: StepMetrics[] = [];
  /** What scoreTokens() kept for backwardFromLogp(). */
  private scored:
    { out: TransformerOutput<Float32Array>; targets: Int32Array; temperature: number } | undefined;

  constructor(
    readonly config: TransformerConfig,
    params: Float32Array,
  ) {
    this.spec = fromTransformerConfig(config);
    this.groups = transformerParamGroups(config);
    this.layout = this.groups[0]!.layout;
    this.params = checkedParams(params, this.layout.total).slice();
    this.optimizer = new CpuOptimizerState(this.params);
  }

  // async: a bad input becomes a rejected promise, as on the GPU.
  async trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void> {
    const { config, layout, params } = this;
    const rows = batch.batch * batch.seq;
    const dLogp = crossEntropyLogpGrad(batch);
    const { logits, acts } = transformerForward(
      config,
      layout,
      params,
      batch.tokens,
      batch.batch,
      batch.seq,
    );
    if (!logits.every(Number.isFinite)) {
      this.pending.push(skippedStep(this.optimizer.stats));
      return Promise.resolve();
    }
    const { logp } = tokenLogprobs(logits, batch.targets, rows, config.vocab, {
      withEntropy: false,
    });
    let loss = 0;
    for (let i = 0; i < rows; i++) loss += dLogp[i]! * logp[i]!;
    const dLogits = tokenLogprobsBackward(
      logits,
      batch.targets,
      dLogp,
      undefined,
      rows,
      config.vocab,
    );
    const grads = transformerBackward(config, layout, params, acts, dLogits);
    const result = optimizerStepCpu(layout, params, grads, this.optimizer, optimizer);
    this.pending.push({ ...result, loss });
  }

  async scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores> {
    const rows = batch * seq;
    const out = transformerForward(this.config, this.layout, this.params, tokens, batch, seq);
    this.scored = { out, targets, temperature };
    if (!out.logits.every(Number.isFinite)) {
      return { logp: new Float32Array(rows).fill(NaN), entropy: new Float32Array(rows).fill(NaN) };
    }
    const { logp, entropy } = tokenLogprobs(out.logits, targets, rows, this.config.vocab, {
      temperature,
    });
    return { logp, entropy: entropy!, ...(out.values ? { values: out.values } : {}) };
  }

  async backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    dValues?: Float32Array,
  ): Promise<void> {
    const scored = this.scored;
    if (!scored) throw new Error('backwardFromLogp: call scoreTokens first');
    this.scored = undefined;
    const { out, targets, temperature } = scored;
    const rows = out.acts.batch * out.acts.seq;
    const dLogits = tokenLogprobsBackward(
      out.logits,
      targets,
      dLogp,
      dEntropy,
      rows,
      this.config.vocab,
      { temperature },
    );
    const grads = transformerBackward(
      this.config,
      this.layout,
      this.params,
      out.acts,
      dLogits,
      dValues,
    );
    const result = optimizerStepCpu(this.layout, this.params, grads, this.optimizer, optimizer);
    this.pending.push({ ...result, loss: NaN });
  }

  async takeMetrics(): Promise<StepMetrics[]> {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  async logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    return transformerForward(this.config, this.layout, this.params, tokens, batch, seq).logits;
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    return generateCpu(this.config, this.layout, this.params, request);
  }

  async readParams(group: ParamGroupName = 'base'): Promise<Float32Array> {
    groupNamed(this.groups, group);
    return this.params.slice();
  }

  writeParams(params: Float32Array, group: ParamGroupName = 'base'): void {
    groupNamed(this.groups, group);
    this.params = checkedParams(params, this.layout.total).slice();
  }

  async readOptimizer(group: ParamGroupName = 'base'): Promise<OptimizerSnapshot> {
    trainableGroupNamed(this.groups, group);
    const { m, v, stats } = this.optimizer;
    return { m: m.slice(), v: v.slice(), stats: Float32Array.from(stats) };
  }

  writeOptimizer(snapshot: OptimizerSnapshot, group: ParamGroupName = 'base'): void {
    trainableGroupNamed(this.groups, group);
    this.optimizer = cpuOptimizerFrom(this.params, snapshot, 'optimizer');
  }

  dispose(): void {}
}

function checkedParams(params: Float32Array, total: number): Float32Array {
  if (params.length !== total) {
    throw new Error(`parameters: expected ${total} floats (the layout), got ${params.length}`);
  }
  return params;
}
