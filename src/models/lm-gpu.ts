/**
 * The tiny GPT language model on WebGPU: its parameters are one trainable group, 'base', held in
 * one flat f32 buffer (TransformerGpu's) with one gradient buffer and one AdamW state. A training step is ONE command encoder — forward,
 * token log-probs, their backward, the model's backward, grad norm + AdamW — with no readback;
 * each step's metrics (loss and optimizer stats) are copied into a ring buffer on the GPU that is
 * read once every METRICS_CAPACITY steps or when the caller asks (takeMetrics).
 */
import type { CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { encodeMatmul } from '../gpu/kernels/nn/matmul';
import { encodeTokenLogprobs } from '../gpu/kernels/token-logprobs';
import { encodeTokenLogprobsBackward } from '../gpu/kernels/token-logprobs-backward';
import { batchRows, type PolicyStepRequest, type PolicyStepResult } from './policy-step-request';
import type { SequenceBatch } from './sequence-batch';
import type { GenerateRequest, Generation } from './generate';
import { generateGpu } from './generate-gpu';
import {
  crossEntropyLogpGrad,
  type GptLanguageModel,
  type OptimizerSnapshot,
  type StepMetrics,
  type TokenScores,
} from './language-model';
import { fromTransformerConfig, type ModelSpec } from './model-spec';
import { readStats, STATS_LENGTH, type OptimizerConfig } from './optimizer';
import { GpuOptimizerState, encodeOptimizerStep } from './optimizer-gpu';
import {
  groupNamed,
  trainableGroupNamed,
  type ParamGroup,
  type ParamGroupName,
} from './param-groups';
import { encodePolicyStepLoss } from './policy-step-gpu';
import type { TransformerConfig } from './transformer-config';
import { transformerParamGroups } from './transformer-params';
import { TransformerGpu, type TransformerWorkspace } from './transformer-gpu';

/** Steps whose metrics fit in the ring before a read is forced. */
export const METRICS_CAPACITY = 64;
/** Floats per step in the ring: [loss, gradNorm, clipScale, applied, step]. */
const SLOT = 8;

/** Per-(B, T) buffers of the cross-entropy step. */
interface LossBuffers {
  rows: number;
  targets: GPUBuffer; // (rows) i32
  dLogp: GPUBuffer; // (rows) −mask / Σ mask
  logp: GPUBuffer; // (rows)
  entropy: GPUBuffer; // (rows)
  dEntropy: GPUBuffer; // (rows)
  dValues: GPUBuffer; // (rows)
  dLogits: GPUBuffer; // (rows, V)
  loss: GPUBuffer; // (1) Σ dLogp·logp = token-mean cross-entropy
}

export class GpuLanguageModel implements GptLanguageModel {
  readonly backend = 'webgpu';
  readonly spec: ModelSpec;
  readonly groups: readonly ParamGroup[];
  readonly model: TransformerGpu;
  private readonly optimizer: GpuOptimizerState;
  private readonly metrics: GPUBuffer;
  private slots = 0;
  /** Metrics read when the ring filled up, waiting for takeMetrics(). */
  private pending: StepMetrics[] = [];
  private lossBuffers: LossBuffers | undefined;
  /** Per ring slot: whether its step computed the loss on the GPU (SFT) or left it to the caller. */
  private slotHasLoss: boolean[] = [];
  /** What scoreTokens() left on the GPU for backwardFromLogp(). */
  private scored: { ws: TransformerWorkspace; rows: number; temperature: number } | undefined;

  constructor(
    readonly gpu: GpuContext,
    readonly config: TransformerConfig,
    params: Float32Array,
  ) {
    this.spec = fromTransformerConfig(config);
    this.groups = transformerParamGroups(config);
    this.model = new TransformerGpu(gpu, config, params);
    this.optimizer = new GpuOptimizerState(gpu, this.model.layout);
    this.metrics = gpu.storage(METRICS_CAPACITY * SLOT * 4, 'step metrics');
  }

  /** The 'base' group's layout: the whole model. */
  get layout() {
    return this.model.layout;
  }

  async trainCrossEntropy(batch: SequenceBatch, optimizer: OptimizerConfig): Promise<void> {
    if (this.slots === METRICS_CAPACITY) this.pending.push(...(await this.flush()));
    const { gpu, config, model } = this;
    const rows = batch.batch * batch.seq;
    const dLogp = crossEntropyLogpGrad(batch);
    const ws = model.writeTokens(batch.tokens, batch.batch, batch.seq);
    const lb = this.lossBuffersFor(rows);
    const queue = gpu.device.queue;
    queue.writeBuffer(lb.targets, 0, batch.targets.buffer, batch.targets.byteOffset, rows * 4);
    queue.writeBuffer(lb.dLogp, 0, dLogp.buffer, dLogp.byteOffset, rows * 4);

    const step = gpu.beginBatch('cross-entropy step');
    await model.encodeForward(step, ws);
    await encodeTokenLogprobs(
      gpu,
      step,
      { logits: ws.logits, targets: lb.targets, logp: lb.logp },
      rows,
      config.vocab,
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
      config.vocab,
    );
    await model.encodeBackward(step, ws, lb.dLogits);
    await encodeOptimizerStep(gpu, step, model, this.optimizer, optimizer);
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
    if (!scored) throw new Error('backwardFromLogp: call scoreTokens first');
    this.scored = undefined;
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
   * The RL step with its loss on the GPU (src/models/policy-step-gpu.ts): forward, token
   * log-probs and every loss term in one batch; a read of the loss statistics (the sync point,
   * where a non-finite log-prob, value or loss stops the step as on the host); then backward,
   * clip and AdamW in a second batch, whose optimizer stats arrive through takeMetrics().
   */
  async policyStep(request: PolicyStepRequest): Promise<PolicyStepResult> {
    this.scored = undefined; // the workspace is about to hold this batch
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

  async logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    const ws = this.model.writeTokens(tokens, batch, seq);
    const pass = this.gpu.beginBatch('logits');
    await this.model.encodeForward(pass, ws);
    pass.submit();
    return this.gpu.readF32(ws.logits, batch * seq * this.config.vocab);
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
    const total = this.layout.total;
    const [m, v, stats] = await Promise.all([
      this.gpu.readF32(this.optimizer.m, total),
      this.gpu.readF32(this.optimizer.v, total),
      this.gpu.readF32(this.optimizer.stats, STATS_LENGTH),
    ]);
    return { m, v, stats };
  }

  writeOptimizer(snapshot: OptimizerSnapshot, group: ParamGroupName = 'base'): void {
    trainableGroupNamed(this.groups, group);
    const total = this.layout.total;
    if (snapshot.m.length !== total || snapshot.v.length !== total) {
      throw new Error(`optimizer moments: expected ${total} floats each (the layout)`);
    }
    if (snapshot.stats.length !== STATS_LENGTH) {
      throw new Error(
        `optimizer stats: expected ${STATS_LENGTH} floats, got ${snapshot.stats.length}`,
      );
    }
    this.optimizer.write(snapshot.m, snapshot.v, snapshot.stats);
  }

  dispose(): void {
    this.releaseLossBuffers();
    this.optimizer.release();
    this.gpu.pool.release(this.metrics);
    this.model.release();
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
  ): Promise<{ ws: TransformerWorkspace; lb: LossBuffers; rows: number }> {
    const { gpu, config, model } = this;
    const rows = batch * seq;
    const ws = model.writeTokens(tokens, batch, seq);
    const lb = this.lossBuffersFor(rows);
    gpu.device.queue.writeBuffer(lb.targets, 0, targets.buffer, targets.byteOffset, rows * 4);
    await model.encodeForward(pass, ws);
    await encodeTokenLogprobs(
      gpu,
      pass,
      { logits: ws.logits, targets: lb.targets, logp: lb.logp, entropy: lb.entropy },
      rows,
      config.vocab,
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
    ws: TransformerWorkspace,
    rows: number,
    temperature: number,
    optimizer: OptimizerConfig,
    uses: { entropy: boolean; values: boolean },
  ): Promise<void> {
    const { gpu, config, model } = this;
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
      config.vocab,
      { temperature },
    );
    await model.encodeBackward(step, ws, lb.dLogits, uses.values ? lb.dValues : undefined);
    await encodeOptimizerStep(gpu, step, model, this.optimizer, optimizer);
    this.recordStats(step, undefined);
  }

  /** Copies the step's loss (when computed on the GPU) and optimizer stats into the next slot. */
  private recordStats(step: CommandBatch, loss: GPUBuffer | undefined): void {
    const at = this.slots * SLOT * 4;
    step.endPass();
    if (loss) step.encoder.copyBufferToBuffer(loss, 0, this.metrics, at, 4);
    step.encoder.copyBufferToBuffer(
      this.optimizer.stats,
      0,
      this.metrics,
      at + 4,
      STATS_LENGTH * 4,
    );
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
      dLogits: f32(rows * this.config.vocab, 'd logits'),
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
