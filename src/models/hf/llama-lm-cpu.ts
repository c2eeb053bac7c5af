/**
 * A brought Llama-family model (Llama, Qwen2, Qwen3) as a LanguageModel on the CPU, so that the
 * lab's trainers (src/rl: GRPO and its family, through src/rl/lm-pipeline.ts) run on it unchanged.
 *
 * Two parameter groups: the frozen 'base' (f32 on the CPU; no gradient, no optimizer state) and,
 * when the model carries LoRA adapters, the trainable 'lora' group (src/models/hf/llama-lora.ts),
 * the only one a step updates — AdamW, gradient norm and clipping run over the adapters alone.
 * `withoutAdapters()` is the same weights with the adapters switched off: the KL reference of a
 * LoRA run, with no second copy of the base.
 *
 * The forward, its backward and generation are the family's CPU ops (llama-cpu.ts,
 * llama-cpu-backward.ts, llama-cpu-generate.ts); log-probs and their gradient are
 * src/ops/token-logprobs.ts, as for the tiny GPT.
 */
import { OpInputError } from '../../ops/errors';
import { tokenLogprobs, tokenLogprobsBackward } from '../../ops/token-logprobs';
import type { GenerateRequest, Generation } from '../generate';
import {
  crossEntropyLogpGrad,
  type LanguageModel,
  type OptimizerSnapshot,
  type StepMetrics,
  type TokenScores,
} from '../language-model';
import type { ModelSpec } from '../model-spec';
import {
  cpuOptimizerFrom,
  CpuOptimizerState,
  optimizerStepCpu,
  skippedStep,
  type OptimizerConfig,
} from '../optimizer';
import {
  groupNamed,
  paramGroups,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from '../param-groups';
import type { ParamLayout } from '../param-layout';
import type { SequenceBatch } from '../sequence-batch';
import { hfBaseGroup } from './hf-weights';
import { llamaLoraBackward } from './llama-cpu-backward';
import { llamaForward, type LlamaForward } from './llama-cpu';
import { llamaGenerate } from './llama-cpu-generate';
import { generateByBudget } from './llama-generate-request';
import { llamaModelFromWeights, type LlamaCpuModel } from './llama-cpu-weights';
import type { LlamaLora } from './llama-lora';

const OP = 'llamaLm';

/**
 * The CPU model over `base`, every weight in the 'base' group's f32 layout (hfBaseGroup(spec,
 * 'f32')): its tensors are views into `base`, not copies. A `base` of another length is refused
 * with both counts.
 */
export function llamaModelFromBase(spec: ModelSpec, base: Float32Array): LlamaCpuModel {
  const { layout } = hfBaseGroup(spec, 'f32');
  if (base.length !== layout.total) {
    throw new OpInputError(
      OP,
      'base',
      `must hold the ${spec.family} model's ${layout.total} weights, got ${base.length}`,
    );
  }
  return llamaModelFromWeights(
    spec,
    new Map(layout.entries.map((e) => [e.name, layout.view(base, e.name)])),
  );
}

/** What scoreTokens() keeps for backwardFromLogp(). */
interface Scored {
  forward: LlamaForward;
  targets: Int32Array;
  temperature: number;
}

export class LlamaCpuLanguageModel implements LanguageModel {
  readonly backend = 'cpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  private readonly model: LlamaCpuModel;
  private readonly baseLayout: ParamLayout;
  private optimizer: CpuOptimizerState<Float32Array> | undefined;
  private pending: StepMetrics[] = [];
  private scored: Scored | undefined;

  /**
   * `base`: every weight in the 'base' group's f32 layout (llamaModelFromBase; the model's
   * tensors are views into it, not copies). `lora`: adapters to train, or none (a frozen model).
   */
  constructor(
    spec: ModelSpec,
    private readonly base: Float32Array,
    private readonly lora?: LlamaLora,
  ) {
    const baseGroup = hfBaseGroup(spec, 'f32');
    this.baseLayout = baseGroup.layout;
    this.model = llamaModelFromBase(spec, base);
    this.spec = spec;
    // A reference (no adapters) is frozen whole; paramGroups() is for models that train.
    this.groups = lora ? paramGroups([baseGroup, lora.group]) : Object.freeze([baseGroup]);
    this.optimizer = lora ? new CpuOptimizerState(lora.params) : undefined;
  }

  /** The same weights with the adapters off: the KL reference, sharing the base (frozen). */
  withoutAdapters(): LlamaCpuLanguageModel {
    return new LlamaCpuLanguageModel(this.spec, this.base);
  }

  async trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void> {
    const dLogp = crossEntropyLogpGrad(batch);
    const { logp } = await this.scoreTokens(batch.tokens, batch.targets, batch.batch, batch.seq, 1);
    let loss = 0;
    for (let i = 0; i < logp.length; i++) loss += dLogp[i]! * logp[i]!;
    await this.backwardFromLogp(dLogp, undefined, optimizer);
    this.pending[this.pending.length - 1]!.loss = Number.isFinite(loss) ? loss : NaN;
  }

  async scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores> {
    const rows = batch * seq;
    const forward = llamaForward(this.model, tokens, batch, seq, { lora: this.lora });
    this.scored = { forward, targets, temperature };
    if (!forward.logits.every(Number.isFinite)) {
      return { logp: new Float32Array(rows).fill(NaN), entropy: new Float32Array(rows).fill(NaN) };
    }
    const { logp, entropy } = tokenLogprobs(forward.logits, targets, rows, this.spec.vocab, {
      temperature,
    });
    return { logp, entropy: entropy! };
  }

  async backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    dValues?: Float32Array,
  ): Promise<void> {
    const scored = this.scored;
    if (!scored) throw new Error(`${OP}.backwardFromLogp: call scoreTokens first`);
    this.scored = undefined;
    if (dValues) throw new OpInputError(OP, 'dValues', 'given, but this model has no value head');
    const { lora, optimizer: state } = this.trainable();
    const { forward, targets, temperature } = scored;
    const rows = forward.activations.batch * forward.activations.seq;
    if (!forward.logits.every(Number.isFinite)) {
      this.pending.push(skippedStep(state.stats));
      return;
    }
    const dLogits = tokenLogprobsBackward(
      forward.logits,
      targets,
      dLogp,
      dEntropy,
      rows,
      this.spec.vocab,
      { temperature },
    );
    const { grads } = llamaLoraBackward(this.model, forward, dLogits);
    const result = optimizerStepCpu(lora.group.layout, lora.params, grads, state, optimizer);
    this.pending.push({ ...result, loss: NaN });
  }

  async takeMetrics(): Promise<StepMetrics[]> {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  async logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    return llamaForward(this.model, tokens, batch, seq, { lora: this.lora }).logits;
  }

  /** The lab's generation contract on the family's KV-cached sampler (llama-generate-request.ts). */
  generate(request: GenerateRequest): Promise<Generation> {
    return generateByBudget(OP, this.spec, request, (prompts, options) =>
      llamaGenerate(this.model, prompts, { ...options, lora: this.lora }),
    );
  }

  async readParams(group: ParamGroupName = 'base'): Promise<Float32Array> {
    groupNamed(this.groups, group);
    return group === 'lora' ? this.lora!.params.slice() : this.base.slice();
  }

  /** Replaces the adapters (in place: the model's views see them). The base is the user's model
   *  and stays as loaded: load another model to change it. */
  writeParams(params: Float32Array, group: ParamGroupName = 'base'): void {
    const { lora } = this.trainable(group);
    if (params.length !== lora.params.length) {
      throw new OpInputError(
        OP,
        'params',
        `must have the 'lora' group's ${lora.params.length} floats, got ${params.length}`,
      );
    }
    if (!params.every(Number.isFinite)) {
      throw new OpInputError(OP, 'params', 'must be finite numbers');
    }
    lora.params.set(params);
  }

  async readOptimizer(group: ParamGroupName = 'lora'): Promise<OptimizerSnapshot> {
    const { optimizer } = this.trainable(group);
    return {
      m: optimizer.m.slice(),
      v: optimizer.v.slice(),
      stats: Float32Array.from(optimizer.stats),
    };
  }

  writeOptimizer(snapshot: OptimizerSnapshot, group: ParamGroupName = 'lora'): void {
    const { lora } = this.trainable(group);
    this.optimizer = cpuOptimizerFrom(lora.params, snapshot, OP);
  }

  dispose(): void {}

  /** The adapters and their optimizer state; a model without adapters (or another group) throws. */
  private trainable(group: ParamGroupName = 'lora'): {
    lora: LlamaLora;
    optimizer: CpuOptimizerState<Float32Array>;
  } {
    trainableGroupNamed(this.groups, group);
    return { lora: this.lora!, optimizer: this.optimizer! };
  }
}
