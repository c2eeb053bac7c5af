/**
 * A language model on one backend (WebGPU or CPU), as the trainers see it: train a step, score
 * tokens, generate, and hand over its state for checkpoints. The trainers in src/rl call this
 * interface and never ask which backend or which family (src/models/model-spec.ts) is underneath.
 *
 * The parameters are parameter groups (src/models/param-groups.ts): each is read and written on
 * its own, by name; only trainable groups have a gradient and optimizer state, and a training
 * step updates those alone. The tiny GPT is one trainable group, 'base'.
 */
import type { GpuContext } from '../gpu/context';
import type { GenerateRequest, Generation } from './generate';
import type { ModelSpec } from './model-spec';
import type { OptimizerConfig } from './optimizer';
import type { ParamGroup, ParamGroupName } from './param-groups';
import type { ParamLayout } from './param-layout';
import type { TransformerConfig } from './transformer-config';
import type { PolicyStepRequest, PolicyStepResult } from './policy-step-request';
import type { SequenceBatch } from './sequence-batch';

export interface StepMetrics {
  /** Optimizer steps applied so far, after this one (a skipped step does not count). */
  step: number;
  /** Token-mean cross-entropy over the mask, before the update (NaN when non-finite). */
  loss: number;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** Factor the gradient was scaled by (1 = not clipped; 0 when skipped). */
  clipScale: number;
  /** False when a non-finite gradient skipped the update (weights untouched). */
  applied: boolean;
}

export interface TokenScores {
  logp: Float32Array; // (B·T); NaN everywhere when the logits were not finite
  entropy: Float32Array; // (B·T)
  /** (B·T) the value head's V at each input position; only when the config has a value head. */
  values?: Float32Array;
}

/** AdamW's state of one trainable parameter group. */
export interface OptimizerSnapshot {
  m: Float32Array; // (group layout.total)
  v: Float32Array; // (group layout.total)
  /** [gradNorm, clipScale, applied, step] */
  stats: Float32Array;
}

export interface LanguageModel {
  readonly backend: 'webgpu' | 'cpu';
  /** The WebGPU device the parameters live on (WebGPU models): the trainers run their other RL
   *  ops there too (src/rl/advantage-ops.ts). */
  readonly gpu?: GpuContext;
  /** The architecture: sizes (vocab, context, width, …), family and the choices that go with it. */
  readonly spec: ModelSpec;
  /** The parameter groups, each with its layout, storage dtype and trainable flag. */
  readonly groups: readonly ParamGroup[];
  /**
   * One supervised step: token-mean cross-entropy of `batch.targets` over `batch.mask`, backward,
   * clip, AdamW. On the GPU this is one command encoder and no readback; metrics are collected
   * and read in bulk by takeMetrics() (or when the metrics buffer fills up).
   */
  trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void>;
  /**
   * Phase 1 of a policy-gradient step: the log-prob (and entropy) of each target under the current
   * parameters, with logits divided by `temperature` (verl, TRL and OpenRLHF score with the rollout
   * temperature). The activations are kept for backwardFromLogp(). One sync point.
   * tokens, targets: (B·T); returns logp, entropy: (B·T).
   */
  scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores>;
  /**
   * Phase 2: given ∂loss/∂logp (and ∂loss/∂entropy) for the tokens last scored — computed by the
   * caller from scoreTokens' output, for these same parameters — backward, clip and AdamW. Its
   * optimizer stats arrive through takeMetrics() (loss NaN there: the caller owns the loss).
   */
  backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    /** ∂loss/∂values (B·T) for the value head (PPO's value loss); omitted = 0. */
    dValues?: Float32Array,
  ): Promise<void>;
  /**
   * Optional: one whole policy-gradient step with the RL loss computed where the parameters live
   * (src/rl/policy-step.ts says what it computes; policyStep() there calls this when present and
   * otherwise composes scoreTokens → the CPU ops → backwardFromLogp).
   */
  policyStep?(request: PolicyStepRequest): Promise<PolicyStepResult>;
  /** Metrics of the steps since the last call, oldest first. GPU: one sync point. */
  takeMetrics(): Promise<StepMetrics[]>;
  /** Logits (B, T, V) of a batch of token ids (B·T). A sync point. */
  logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array>;
  generate(request: GenerateRequest): Promise<Generation>;
  /** A copy of one group's parameters as f32, (group layout.total); 'base' when not named. */
  readParams(group?: ParamGroupName): Promise<Float32Array>;
  /** Replaces one group's parameters ('base' when not named); throws on a wrong length. */
  writeParams(params: Float32Array, group?: ParamGroupName): void;
  /** One trainable group's AdamW state ('base' when not named); a frozen group throws. */
  readOptimizer(group?: ParamGroupName): Promise<OptimizerSnapshot>;
  writeOptimizer(snapshot: OptimizerSnapshot, group?: ParamGroupName): void;
  dispose(): void;
}

/**
 * The tiny GPT (family 'gpt') as a LanguageModel, with its own configuration and its one 'base'
 * group's layout: what its checkpoints, ONNX export and reference copies are built from.
 */
export interface GptLanguageModel extends LanguageModel {
  readonly config: TransformerConfig;
  /** The 'base' group's layout: the whole model. */
  readonly layout: ParamLayout;
}

/** Σ mask, checked ≥ 1: the token count the loss divides by. */
export function maskCount(batch: SequenceBatch): number {
  let count = 0;
  for (const m of batch.mask) count += m;
  if (count < 1) throw new Error('trainCrossEntropy: the mask selects no token to train on');
  return count;
}

/** dloss/dlogp of the token-mean loss −Σ mask·logp / Σ mask: −mask / Σ mask. (B·T) */
export function crossEntropyLogpGrad(batch: SequenceBatch): Float32Array {
  const count = maskCount(batch);
  return batch.mask.map((m) => -m / count);
}
