/**
 * The training steps of a language model on WebGPU, for any network that records a forward pass
 * to logits and a backward pass from ∂L/∂logits: the tiny GPT (lm-gpu.ts, every weight trained)
 * and the Llama family with LoRA adapters (hf/llama-lm-gpu.ts, the adapters alone trained). A
 * training step is ONE command encoder — forward, token log-probs, their backward, the network's
 * backward, grad norm + AdamW over the trained parameters — with no readback; each step's metrics
 * (loss and optimizer stats) are copied into a ring buffer on the GPU that is read once every
 * METRICS_CAPACITY steps or when the caller asks (takeMetrics). The RL step (policyStep) records
 * its loss on the GPU too (policy-step-gpu.ts); only its statistics are read back.
 */
import type { CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { encodeMatmul } from '../gpu/kernels/nn/matmul';
import { encodeTokenLogprobs } from '../gpu/kernels/token-logprobs';
import { encodeTokenLogprobsBackward } from '../gpu/kernels/token-logprobs-backward';
import {
  crossEntropyLogpGrad,
  type OptimizerSnapshot,
  type StepMetrics,
  type TokenScores,
} from './language-model';
import { readStats, STATS_LENGTH, type OptimizerConfig } from './optimizer';
import { GpuOptimizerState, encodeOptimizerStep } from './optimizer-gpu';
import type { ParamLayout } from './param-layout';
import { encodePolicyStepLoss } from './policy-step-gpu';
import { batchRows, type PolicyStepRequest, type PolicyStepResult } from './policy-step-request';
import type { SequenceBatch } from './sequence-batch';

/** Steps whose metrics fit in the ring before a read is forced. */
export const METRICS_CAPACITY = 64;
/** Floats per step in the ring: [loss, gradNorm, clipScale, applied, step]. */
const SLOT = 8;

/** A network's activations of one (B, T) pass: the logits (B·T, V) and, with a value head, V. */
export interface GpuPassWorkspace {
  logits: GPUBuffer;
  values?: GPUBuffer | undefined;
}

/** What the steps need of a network on the GPU. */
export interface GpuNetwork<W extends GpuPassWorkspace> {
  /** Uploads token ids (B·T) into a workspace for (B, T) and returns it. */
  writeTokens(tokens: Int32Array, batch: number, seq: number): W;
  /** Records the forward pass of the workspace's tokens: ws.logits (and ws.values). */
  encodeForward(pass: CommandBatch, ws: W): Promise<void>;
  /**
   * Records the backward pass from dLogits (B·T, V) (and dValues) into the trained parameters'
   * gradient buffer; the forward of the same workspace was recorded before it.
   */
  encodeBackward(step: CommandBatch, ws: W, dLogits: GPUBuffer, dValues?: GPUBuffer): Promise<void>;
}

/** The parameters a step updates: one buffer, its gradient, their layout. */
export interface GpuTrained {
  params: GPUBuffer;
  grads: GPUBuffer;
  layout: ParamLayout;
}

/** Per-(B, T) buffers of the steps' losses. */
interface LossBuffers {
  rows: number;
  targets: GPUBuffer; // (rows) i32
  dLogp: GPUBuffer; // (rows)
  logp: GPUBuffer; // (rows)
  entropy: GPUBuffer; // (rows)
  dEntropy: GPUBuffer; // (rows)
  dValues: GPUBuffer; // (rows)
  dLogits: GPUBuffer; // (rows, V)
  loss: GPUBuffer; // (1) Σ dLogp·logp = token-mean cross-entropy
}

export class GpuLmSteps<W extends GpuPassWorkspace> {
  /** AdamW over the trained parameters; undefined for a frozen network (a KL reference). */
  private readonly optimizer: GpuOptimizerState | undefined;
  private readonly metrics: GPUBuffer;
  private slots = 0;
  /** Metrics read when the ring filled up, waiting for takeMetrics(). */
  private pending: StepMetrics[] = [];
  private lossBuffers: LossBuffers | undefined;
  /** Per ring slot: whether its step computed the loss on the GPU (SFT) or left it to the caller. */
  private slotHasLoss: boolean[] = [];
  /** What scoreTokens() left on the GPU for backwardFromLogp(). */
  private scored: { ws: W; rows: number; temperature: number } | undefined;

  constructor(
    private readonly gpu: GpuContext,
    private readonly vocab: number,
    private readonly network: GpuNetwork<W>,
    private readonly trained: GpuTrained | undefined,
    /** Names the model in errors. */
    private readonly name: string,
  ) {
    this.optimizer = trained && new GpuOptimizerState(gpu, trained.layout);
    this.metrics = gpu.storage(METRICS_CAPACITY * SLOT * 4, 'step metrics');
  }

  async trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void> {
    this.trainable();
    if (this.slots === METRICS_CAPACITY) this.pending.push(...(await this.flush()));
    const { gpu, network, vocab } = this;
    const rows = batch.batch * batch.seq;
    const dLogp = crossEntropyLogpGrad(batch);
    const ws = network.writeTokens(batch.tokens, batch.batch, batch.seq);
    const lb = this.lossBuffersFor(rows);
    const queue = gpu.device.queue;
    queue.writeBuffer(lb.targets, 0, batch.targets.buffer, batch.targets.byteOffset, rows * 4);
    queue.writeBuffer(lb.dLogp, 0, dLogp.buffer, dLogp.byteOffset, rows * 4);

    const step = gpu.beginBatch('cross-entropy step');
    await network.encodeForward(step, ws);
    await encodeTokenLogprobs(
      gpu,
      step,
      { logits: ws.logits, targets: lb.targets, logp: lb.logp },
      rows,
      vocab,
      { withEntropy: false },
    );
    await encodeMatmul(
      gpu,
      step,
      { a: lb.dLogp, b: lb.logp, out: lb.loss },
      { m: 1, k: rows, n: 1 },
    );
    await encodeTokenLogprobsBackward(
      gpu,
      step,
      { logits: ws.logits, targets: lb.targets, dLogp: lb.dLogp, dLogits: lb.dLogits },
      rows,
      vocab,
    );
    await network.encodeBackward(step, ws, lb.dLogits);
    await this.encodeOptimizer(step, optimizer);
    this.recordStats(step, lb.loss);
    step.submit();
  }

  async scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores> {
    const { gpu } = this;
    const pass = gpu.beginBatch('score tokens');
    const { ws, lb, rows } = await this.encodeScoring(
      pass,
      tokens,
      targets,
      batch,
      seq,
      temperature,
    );
    pass.submit();
    this.scored = { ws, rows, temperature };
    // Sync point: the caller's loss needs the log-probs on the CPU.
    const [logp, entropy, values] = await Promise.all([
      gpu.readF32(lb.logp, rows),
      gpu.readF32(lb.entropy, rows),
      ws.values ? gpu.readF32(ws.values, rows) : undefined,
    ]);
    return { logp, entropy, ...(values ? { values } : {}) };
  }

  async backwardFromLogp(
    dLogp: Float32Array,
    dEntropy: Float32Array | undefined,
    optimizer: OptimizerConfig,
    dValues?: Float32Array,
  ): Promise<void> {
    const scored = this.scored;
    if (!scored) throw new Error(`${this.name}.backwardFromLogp: call scoreTokens first`);
    this.scored = undefined;
    this.trainable();
    if (this.slots === METRICS_CAPACITY) this.pending.push(...(await this.flush()));
    const { ws, rows, temperature } = scored;
    const lb = this.lossBuffersFor(rows);
    const queue = this.gpu.device.queue;
    queue.writeBuffer(lb.dLogp, 0, dLogp.buffer, dLogp.byteOffset, rows * 4);
    if (dEntropy) queue.writeBuffer(lb.dEntropy, 0, dEntropy.buffer, dEntropy.byteOffset, rows * 4);
    if (dValues) queue.writeBuffer(lb.dValues, 0, dValues.buffer, dValues.byteOffset, rows * 4);
    const step = this.gpu.beginBatch('policy-gradient step');
    await this.encodeBackwardStep(step, ws, rows, temperature, optimizer, {
      entropy: dEntropy !== undefined,
      values: dValues !== undefined,
    });
    step.submit();
  }

  /**
   * The RL step with its loss on the GPU (policy-step-gpu.ts): forward, token log-probs and every
   * loss term in one batch; a read of the loss statistics (the sync point, where a non-finite
   * log-prob, value or loss stops the step as on the host); then backward, clip and AdamW in a
   * second batch, whose optimizer stats arrive through takeMetrics().
   */
  async policyStep(request: PolicyStepRequest): Promise<PolicyStepResult> {
    this.scored = undefined; // the workspace is about to hold this batch
    this.trainable();
    if (this.slots === METRICS_CAPACITY) this.pending.push(...(await this.flush()));
    const { gpu } = this;
    const { tokens, targets, seq, temperature } = request;
    const pass = gpu.beginBatch('policy step: forward and loss');
    const scoring = await this.encodeScoring(
      pass,
      tokens,
      targets,
      batchRows(request),
      seq,
      temperature,
    );
    const { ws, lb, rows } = scoring;
    const loss = await encodePolicyStepLoss(
      gpu,
      pass,
      { ...lb, ...(ws.values ? { values: ws.values } : {}) },
      request,
    );
    try {
      pass.submit();
      const result = await loss.read();
      if (result.skipped) return result;
      const step = gpu.beginBatch('policy step: backward');
      await this.encodeBackwardStep(step, ws, rows, temperature, request.optimizer, {
        entropy: request.entropyCoef > 0,
        values: request.value !== undefined,
      });
      step.submit();
      return result;
    } finally {
      loss.release();
    }
  }

  async takeMetrics(): Promise<StepMetrics[]> {
    const flushed = await this.flush();
    const taken = [...this.pending, ...flushed];
    this.pending = [];
    return taken;
  }

  /** The logits (B, T, V) of a batch of token ids. A sync point. */
  async logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    const ws = this.network.writeTokens(tokens, batch, seq);
    const pass = this.gpu.beginBatch('logits');
    await this.network.encodeForward(pass, ws);
    pass.submit();
    return this.gpu.readF32(ws.logits, batch * seq * this.vocab);
  }

  async readOptimizer(): Promise<OptimizerSnapshot> {
    const { optimizer, trained } = this.trainable();
    const total = trained.layout.total;
    const [m, v, stats] = await Promise.all([
      this.gpu.readF32(optimizer.m, total),
      this.gpu.readF32(optimizer.v, total),
      this.gpu.readF32(optimizer.stats, STATS_LENGTH),
    ]);
    return { m, v, stats };
  }

  writeOptimizer(snapshot: OptimizerSnapshot): void {
    const { optimizer, trained } = this.trainable();
    const total = trained.layout.total;
    if (snapshot.m.length !== total || snapshot.v.length !== total) {
      throw new Error(`optimizer moments: expected ${total} floats each (the layout)`);
    }
    if (snapshot.stats.length !== STATS_LENGTH) {
      throw new Error(
        `optimizer stats: expected ${STATS_LENGTH} floats, got ${snapshot.stats.length}`,
      );
    }
    optimizer.write(snapshot.m, snapshot.v, snapshot.stats);
  }

  release(): void {
    this.releaseLossBuffers();
    this.optimizer?.release();
    this.gpu.pool.release(this.metrics);
  }

  /** The trained parameters and their optimizer; a frozen network throws. */
  private trainable(): { optimizer: GpuOptimizerState; trained: GpuTrained } {
    if (!this.trained || !this.optimizer) {
      throw new Error(`${this.name}: this model is frozen (no trainable parameters)`);
    }
    return { optimizer: this.optimizer, trained: this.trained };
  }

  private async encodeOptimizer(step: CommandBatch, optimizer: OptimizerConfig): Promise<void> {
    const { optimizer: state, trained } = this.trainable();
    await encodeOptimizerStep(this.gpu, step, trained, state, optimizer);
  }

  /**
   * Records the forward pass of (batch, seq) tokens and the log-probs and entropies of `targets`
   * at `temperature` into lb.logp and lb.entropy (the value head's V into ws.values).
   */
  private async encodeScoring(
    pass: CommandBatch,
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<{ ws: W; lb: LossBuffers; rows: number }> {
    const { gpu, network } = this;
    const rows = batch * seq;
    const ws = network.writeTokens(tokens, batch, seq);
    const lb = this.lossBuffersFor(rows);
    gpu.device.queue.writeBuffer(lb.targets, 0, targets.buffer, targets.byteOffset, rows * 4);
    await network.encodeForward(pass, ws);
    await encodeTokenLogprobs(
      gpu,
      pass,
      { logits: ws.logits, targets: lb.targets, logp: lb.logp, entropy: lb.entropy },
      rows,
      this.vocab,
      { temperature },
    );
    return { ws, lb, rows };
  }

  /**
   * Records the backward pass from lb.dLogp (and lb.dEntropy, lb.dValues where `uses` says so)
   * through the scored workspace, then clip and AdamW, and the step's stats into the ring.
   */
  private async encodeBackwardStep(
    step: CommandBatch,
    ws: W,
    rows: number,
    temperature: number,
    optimizer: OptimizerConfig,
    uses: { entropy: boolean; values: boolean },
  ): Promise<void> {
    const { gpu } = this;
    const lb = this.lossBuffersFor(rows);
    await encodeTokenLogprobsBackward(
      gpu,
      step,
      {
        logits: ws.logits,
        targets: lb.targets,
        dLogp: lb.dLogp,
        ...(uses.entropy ? { dEntropy: lb.dEntropy } : {}),
        dLogits: lb.dLogits,
      },
      rows,
      this.vocab,
      { temperature },
    );
    await this.network.encodeBackward(step, ws, lb.dLogits, uses.values ? lb.dValues : undefined);
    await this.encodeOptimizer(step, optimizer);
    this.recordStats(step, undefined);
  }

  /** Copies the step's loss (when computed on the GPU) and optimizer stats into the next slot. */
  private recordStats(step: CommandBatch, loss: GPUBuffer | undefined): void {
    const { optimizer } = this.trainable();
    const at = this.slots * SLOT * 4;
    step.endPass();
    if (loss) step.encoder.copyBufferToBuffer(loss, 0, this.metrics, at, 4);
    step.encoder.copyBufferToBuffer(optimizer.stats, 0, this.metrics, at + 4, STATS_LENGTH * 4);
    this.slotHasLoss[this.slots] = loss !== undefined;
    this.slots += 1;
  }

  /** Reads the ring (a sync point) and empties it. */
  private async flush(): Promise<StepMetrics[]> {
    const count = this.slots;
    if (count === 0) return [];
    this.slots = 0;
    // The whole ring every time: one staging-buffer size, so reads allocate nothing new.
    const ring = await this.gpu.readF32(this.metrics, METRICS_CAPACITY * SLOT);
    const out: StepMetrics[] = [];
    for (let s = 0; s < count; s++) {
      const slot = ring.subarray(s * SLOT, (s + 1) * SLOT);
      const stats = readStats(slot.subarray(1, 1 + STATS_LENGTH));
      const hasLoss = this.slotHasLoss[s] === true;
      out.push({ ...stats, loss: stats.applied && hasLoss ? slot[0]! : NaN });
    }
    return out;
  }

  private lossBuffersFor(rows: number): LossBuffers {
    if (this.lossBuffers?.rows === rows) return this.lossBuffers;
    this.releaseLossBuffers();
    const f32 = (n: number, label: string) => this.gpu.storage(n * 4, label);
    this.lossBuffers = {
      rows,
      targets: f32(rows, 'targets'),
      dLogp: f32(rows, 'd logp'),
      logp: f32(rows, 'logp'),
      entropy: f32(rows, 'entropy'),
      dEntropy: f32(rows, 'd entropy'),
      dValues: f32(rows, 'd values'),
      dLogits: f32(rows * this.vocab, 'd logits'),
      loss: f32(1, 'loss'),
    };
    return this.lossBuffers;
  }

  private releaseLossBuffers(): void {
    const lb = this.lossBuffers;
    if (!lb) return;
    for (const buffer of [
      lb.targets,
      lb.dLogp,
      lb.logp,
      lb.entropy,
      lb.dEntropy,
      lb.dValues,
      lb.dLogits,
      lb.loss,
    ]) {
      this.gpu.pool.release(buffer);
    }
    this.lossBuffers = undefined;
  }
}

/**
 * A language model whose steps are GpuLmSteps': the calls that only pass through to them, so that
 * each model (the tiny GPT, the Llama family with LoRA) writes only what is its own.
 */
export abstract class GpuStepsModel<W extends GpuPassWorkspace> {
  protected abstract readonly steps: GpuLmSteps<W>;

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
}
