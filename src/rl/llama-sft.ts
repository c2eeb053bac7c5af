/**
 * Supervised fine-tuning of a Llama-family model on the CPU (src/models/hf/llama-cpu*.ts): every
 * weight trainable in one flat f32 array laid out as the checkpoint's tensors (hf-weights.ts),
 * AdamW (src/ops/nn/adamw.ts) with weight decay on the matrices only, the gradient clipped by
 * its global norm as PyTorch's clip_grad_norm_ does.
 *
 * One step on B examples (prompt ids, answer ids), each sequence = prompt ++ answer, right-padded
 * with `pad` to the batch's longest (T): the causal mask keeps padding out of every real
 * position. The loss is the mean over all answer tokens of the batch of −log p(token | before);
 * prompt tokens and padding are not trained on:
 *
 *   L = −(1/n) Σ_b Σ_{t ∈ answer(b)} log softmax(logits[b, t − 1])[ids[b, t]]
 *
 * Deterministic: the same initial weights and batches give the same weights bit for bit.
 */
import { hfParamSpecs } from '../models/hf/hf-weights';
import { llamaForward } from '../models/hf/llama-cpu';
import { llamaBackward } from '../models/hf/llama-cpu-backward';
import { llamaModelFromWeights, type LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import type { ModelSpec } from '../models/model-spec';
import { ParamLayout } from '../models/param-layout';
import { OpInputError } from '../ops/errors';
import { adamwStep } from '../ops/nn/adamw';
import { clipScale, gradNorm } from '../ops/nn/grad-norm';
import { tokenLogprobs, tokenLogprobsBackward } from '../ops/token-logprobs';

export interface LlamaSftOptimizer {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** Decoupled weight decay of the matrices and embeddings (norm gains are not decayed). */
  weightDecay: number;
  /** Global gradient-norm clip; ≤ 0 or ∞ turns it off. */
  maxGradNorm: number;
}

export interface SftExample {
  prompt: Int32Array;
  answer: Int32Array;
}

export interface LlamaSftStep {
  /** Mean −log p over the batch's answer tokens, before the update. */
  loss: number;
  /** The gradient's global norm, before clipping. */
  gradNorm: number;
  /** Answer tokens in the batch. */
  tokens: number;
}

export class LlamaSft {
  readonly layout: ParamLayout;
  /** Every weight, laid out by `layout`; the model's tensors are views into it. */
  readonly params: Float32Array;
  readonly model: LlamaCpuModel;
  private readonly grads: Float32Array;
  private readonly m: Float32Array;
  private readonly v: Float32Array;
  private steps = 0;

  constructor(
    readonly spec: ModelSpec,
    params: Float32Array,
    private readonly optimizer: LlamaSftOptimizer,
    private readonly pad: number,
  ) {
    this.layout = new ParamLayout(hfParamSpecs(spec));
    if (params.length !== this.layout.total) {
      throw new OpInputError(
        'LlamaSft',
        'params',
        `must have the layout's ${this.layout.total} floats, got ${params.length}`,
      );
    }
    this.params = params;
    const views = new Map(
      this.layout.entries.map((e) => [e.name, this.layout.view(params, e.name)]),
    );
    this.model = llamaModelFromWeights(spec, views);
    this.grads = new Float32Array(params.length);
    this.m = new Float32Array(params.length);
    this.v = new Float32Array(params.length);
  }

  /** Fresh weights for `spec` from `seed` (normal(0, 0.02) matrices, unit norm gains). */
  static initialParams(spec: ModelSpec, seed: number): Float32Array {
    return new ParamLayout(hfParamSpecs(spec)).initialize<Float32Array>(seed);
  }

  get stepCount(): number {
    return this.steps;
  }

  /** One AdamW step on `batch`; returns the loss before it. */
  step(batch: readonly SftExample[]): LlamaSftStep {
    const { loss, tokens } = this.lossAndGrads(batch);
    const norm = gradNorm(this.grads);
    const scale = clipScale(norm, this.optimizer.maxGradNorm);
    this.steps++;
    const { lr, beta1, beta2, eps, weightDecay } = this.optimizer;
    for (const [range, decay] of [
      [this.layout.decayRange, weightDecay],
      [this.layout.noDecayRange, 0],
    ] as const) {
      if (range.count === 0) continue;
      const part = (a: Float32Array) => a.subarray(range.offset, range.offset + range.count);
      adamwStep(
        part(this.params),
        part(this.grads),
        part(this.m),
        part(this.v),
        this.steps,
        { lr, beta1, beta2, eps, weightDecay: decay },
        scale,
      );
    }
    return { loss, gradNorm: norm, tokens };
  }

  /**
   * The loss on `batch` and its gradient (laid out as `params`; the returned array is reused by
   * the next call), without an update.
   */
  lossAndGrads(batch: readonly SftExample[]): {
    loss: number;
    tokens: number;
    grads: Float32Array;
  } {
    if (batch.length === 0) throw new OpInputError('LlamaSft.step', 'batch', 'must not be empty');
    const { vocab: V, context } = this.spec;
    const B = batch.length;
    const T = Math.max(...batch.map((e) => e.prompt.length + e.answer.length));
    if (T > context) {
      throw new OpInputError(
        'LlamaSft.step',
        'batch',
        `holds a sequence of ${T} tokens, past the model's context of ${context}`,
      );
    }
    const ids = new Int32Array(B * T).fill(this.pad);
    // rows[n]: the row (b·T + t − 1) whose logits predict answer token n, targets[n] that token.
    const rows: number[] = [];
    const targets: number[] = [];
    batch.forEach(({ prompt, answer }, b) => {
      if (prompt.length === 0) {
        throw new OpInputError('LlamaSft.step', `batch[${b}].prompt`, 'must not be empty');
      }
      ids.set(prompt, b * T);
      ids.set(answer, b * T + prompt.length);
      for (let i = 0; i < answer.length; i++) {
        rows.push(b * T + prompt.length + i - 1);
        targets.push(answer[i]!);
      }
    });
    const n = rows.length;
    if (n === 0) throw new OpInputError('LlamaSft.step', 'batch', 'has no answer tokens');
    const forward = llamaForward(this.model, ids, B, T);
    // The answer rows' logits (n, V), their log-probs and ∂L/∂logits, scattered back to (B·T, V).
    const picked = new Float32Array(n * V);
    rows.forEach((row, i) => picked.set(forward.logits.subarray(row * V, (row + 1) * V), i * V));
    const targetIds = Int32Array.from(targets);
    const { logp } = tokenLogprobs(picked, targetIds, n, V, { withEntropy: false });
    let loss = 0;
    for (let i = 0; i < n; i++) loss -= logp[i]!;
    loss /= n;
    const dPicked = tokenLogprobsBackward(
      picked,
      targetIds,
      new Float32Array(n).fill(-1 / n),
      undefined,
      n,
      V,
    );
    const dLogits = new Float32Array(B * T * V);
    rows.forEach((row, i) => dLogits.set(dPicked.subarray(i * V, (i + 1) * V), row * V));
    const grads = llamaBackward(this.model, forward, dLogits);
    this.grads.fill(0);
    for (const [name, grad] of grads) this.grads.set(grad, this.layout.entry(name).offset);
    return { loss, tokens: n, grads: this.grads };
  }
}
