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
   * gradient buffer; the forward of the same workspace was recorded before it. With `accumulate`
   * (micro-batches after the first) the gradients are added to what the buffer holds.
   */
  encodeBackward(
    step: CommandBatch,
    ws: W,
    dLogits: GPUBuffer,
    dValues?: GPUBuffer,
    accumulate?: boolean,
  ): Promise<void>;
}

/**
 * Micro-batches: the most sequences one forward and backward take at once. A step over more rows
 * runs them in slices — scoring each, then (the loss computed over the whole batch) recomputing
 * each slice's forward for its backward, the gradients accumulated — with one optimizer step at
 * the end: the same update, with the activations and logits of one slice alive at a time.
 */
export interface MicroBatching {
  sequences: number;
}

/** The parameters a step updates: one buffer, its gradient, their layout. */
export interface GpuTrained {
  params: GPUBuffer;
  grads: GPUBuffer;
  layout: ParamLayout;
}

/** What a scoring pass leaves for the backward: its workspace, or (micro-batched) its rows. */
type Scored<W> =
  | { ws: W; rows: number; temperature: number }
  | { sliced: Slicing; rows: number; temperature: number };

/** A micro-batched step's rows: the tokens, and each slice's first and end sequence. */
interface Slicing {
  tokens: Int32Array;
  seq: number;
  slices: [number, number][];
}

/** One slice's buffers: its targets, log-probs, entropies and their gradients. */
interface SliceBuffers {
  rows: number;
  targets: GPUBuffer;
  logp: GPUBuffer;
  entropy: GPUBuffer;
  dLogp: GPUBuffer;
  dEntropy: GPUBuffer;
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
  loss: GPUBuffer; // (1) Σ dLogp·logp = token-mean cross-entropy
}

/** lb.loss = Σ dLogp·logp over `rows`: the token-mean cross-entropy, dLogp being −mask / Σ mask. */
function encodeCrossEntropyLoss(
  gpu: GpuContext,
  pass: CommandBatch,
  lb: LossBuffers,
  rows: number,
): Promise<void> {
  return encodeMatmul(
    gpu,
    pass,
    { a: lb.dLogp, b: lb.logp, out: lb.loss },
    { m: 1, k: rows, n: 1 },
  );
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
  private scored: Scored<W> | undefined;
  /** Per-slice buffers of micro-batched steps. */
  private sliceBuffers: SliceBuffers | undefined;
  /**
   * ∂L/∂logits (rows, V) of the rows one backward takes: the whole batch, or one micro-batch —
   * never the whole batch's when it is sliced, the largest buffer a step would otherwise hold.
   */
  private dLogits: { rows: number; buffer: GPUBuffer } | undefined;

  constructor(
    private readonly gpu: GpuContext,
    private readonly vocab: number,
    private readonly network: GpuNetwork<W>,
    private readonly trained: GpuTrained | undefined,
    /** Names the model in errors. */
    private readonly name: string,
    /** Slices a step's rows (a network whose backward accumulates); none: one pass. */
    private readonly micro?: MicroBatching,
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
    if (this.slices(batch.batch)) return this.trainCrossEntropySliced(batch, dLogp, optimizer);
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
    await encodeCrossEntropyLoss(gpu, step, lb, rows);
    await encodeTokenLogprobsBackward(
      gpu,
      step,
      { logits: ws.logits, targets: lb.targets, dLogp: lb.dLogp, dLogits: this.dLogitsFor(rows) },
      rows,
      vocab,
    );
    await network.encodeBackward(step, ws, this.dLogitsFor(rows));
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
    if (this.slices(batch)) {
      const { lb, rows, sliced } = await this.scoreSlices(tokens, targets, batch, seq, temperature);
      this.scored = { sliced, rows, temperature };
      const [logp, entropy] = await Promise.all([
        gpu.readF32(lb.logp, rows),
        gpu.readF32(lb.entropy, rows),
      ]);
      return { logp, entropy };
    }
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
    const { rows, temperature } = scored;
    const lb = this.lossBuffersFor(rows);
    const queue = this.gpu.device.queue;
    queue.writeBuffer(lb.dLogp, 0, dLogp.buffer, dLogp.byteOffset, rows * 4);
    if (dEntropy) queue.writeBuffer(lb.dEntropy, 0, dEntropy.buffer, dEntropy.byteOffset, rows * 4);
    if ('sliced' in scored) {
      if (dValues) throw new Error(`${this.name}: micro-batched steps take no value gradient`);
      const uses = { entropy: dEntropy !== undefined };
      await this.backwardSlices(scored.sliced, rows, temperature, optimizer, uses);
      return;
    }
    const { ws } = scored;
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
    if (this.slices(batchRows(request))) return this.policyStepSliced(request);
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
    this.releaseSliceBuffers();
    this.releaseDLogits();
    this.optimizer?.release();
    this.gpu.pool.release(this.metrics);
  }

  /** Whether a step over `batch` sequences runs in micro-batches. */
  private slices(batch: number): boolean {
    return this.micro !== undefined && batch > this.micro.sequences;
  }

  /** `batch` sequences in slices of at most micro.sequences: [first, end) of each. */
  private slicing(tokens: Int32Array, batch: number, seq: number): Slicing {
    const size = this.micro!.sequences;
    const slices: [number, number][] = [];
    for (let a = 0; a < batch; a += size) slices.push([a, Math.min(batch, a + size)]);
    return { tokens, seq, slices };
  }

  /**
   * Scores `batch` sequences slice by slice into lb.logp and lb.entropy (one submit per slice: a
   * slice's tokens are written to the workspace the one before used).
   */
  private async scoreSlices(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<{ lb: LossBuffers; rows: number; sliced: Slicing }> {
    const { gpu, network } = this;
    const rows = batch * seq;
    const lb = this.lossBuffersFor(rows);
    gpu.device.queue.writeBuffer(lb.targets, 0, targets.buffer, targets.byteOffset, rows * 4);
    const sliced = this.slicing(tokens, batch, seq);
    const sb = this.sliceBuffersFor(this.micro!.sequences * seq);
    for (const [a, b] of sliced.slices) {
      const n = (b - a) * seq;
      const at = a * seq * 4;
      const ws = network.writeTokens(tokens.subarray(a * seq, b * seq), b - a, seq);
      const pass = gpu.beginBatch('score tokens: micro-batch');
      pass.copyRange(lb.targets, at, sb.targets, 0, n * 4);
      await network.encodeForward(pass, ws);
      await encodeTokenLogprobs(
        gpu,
        pass,
        { logits: ws.logits, targets: sb.targets, logp: sb.logp, entropy: sb.entropy },
        n,
        this.vocab,
        { temperature },
      );
      pass.copyRange(sb.logp, 0, lb.logp, at, n * 4);
      pass.copyRange(sb.entropy, 0, lb.entropy, at, n * 4);
      pass.submit();
    }
    return { lb, rows, sliced };
  }

  /**
   * The backward of a micro-batched step from lb.dLogp (and lb.dEntropy): each slice's forward
   * recomputed, its gradient accumulated, then one clip and AdamW and the step's stats.
   */
  private async backwardSlices(
    sliced: Slicing,
    rows: number,
    temperature: number,
    optimizer: OptimizerConfig,
    uses: { entropy: boolean },
    /** The step's loss where the GPU computed it (cross-entropy), for its stats. */
    loss?: GPUBuffer,
  ): Promise<void> {
    const { gpu, network } = this;
    const { tokens, seq } = sliced;
    const lb = this.lossBuffersFor(rows);
    const sb = this.sliceBuffersFor(this.micro!.sequences * seq);
    for (const [i, [a, b]] of sliced.slices.entries()) {
      const n = (b - a) * seq;
      const at = a * seq * 4;
      const ws = network.writeTokens(tokens.subarray(a * seq, b * seq), b - a, seq);
      const step = gpu.beginBatch('policy-gradient step: micro-batch');
      step.copyRange(lb.targets, at, sb.targets, 0, n * 4);
      step.copyRange(lb.dLogp, at, sb.dLogp, 0, n * 4);
      if (uses.entropy) step.copyRange(lb.dEntropy, at, sb.dEntropy, 0, n * 4);
      await network.encodeForward(step, ws);
      await encodeTokenLogprobsBackward(
        gpu,
        step,
        {
          logits: ws.logits,
          targets: sb.targets,
          dLogp: sb.dLogp,
          ...(uses.entropy ? { dEntropy: sb.dEntropy } : {}),
          dLogits: this.dLogitsFor(sb.rows),
        },
        n,
        this.vocab,
        { temperature },
      );
      await network.encodeBackward(step, ws, this.dLogitsFor(sb.rows), undefined, i > 0);
      step.submit();
    }
    const step = gpu.beginBatch('policy-gradient step: optimizer');
    await this.encodeOptimizer(step, optimizer);
    this.recordStats(step, loss);
    step.submit();
  }

  /**
   * trainCrossEntropy in micro-batches: the rows scored slice by slice for the loss (Σ dLogp·logp,
   * as the one-pass step computes it), then each slice's backward, one AdamW step for all.
   */
  private async trainCrossEntropySliced(
    batch: SequenceBatch,
    dLogp: Float32Array,
    optimizer: OptimizerConfig,
  ): Promise<void> {
    const { gpu } = this;
    const { tokens, targets, seq } = batch;
    const { lb, rows, sliced } = await this.scoreSlices(tokens, targets, batch.batch, seq, 1);
    gpu.device.queue.writeBuffer(lb.dLogp, 0, dLogp.buffer, dLogp.byteOffset, rows * 4);
    const pass = gpu.beginBatch('cross-entropy step: loss');
    await encodeCrossEntropyLoss(gpu, pass, lb, rows);
    pass.submit();
    await this.backwardSlices(sliced, rows, 1, optimizer, { entropy: false }, lb.loss);
  }

  /** policyStep in micro-batches: scored slice by slice, the loss over all rows, then the backward. */
  private async policyStepSliced(request: PolicyStepRequest): Promise<PolicyStepResult> {
    if (request.value) throw new Error(`${this.name}: micro-batched steps take no value loss`);
    const { tokens, targets, seq, temperature } = request;
    const batch = batchRows(request);
    const { lb, rows, sliced } = await this.scoreSlices(tokens, targets, batch, seq, temperature);
    const pass = this.gpu.beginBatch('policy step: loss');
    const loss = await encodePolicyStepLoss(this.gpu, pass, lb, request);
    try {
      pass.submit();
      const result = await loss.read();
      if (result.skipped) return result;
      const uses = { entropy: request.entropyCoef > 0 };
      await this.backwardSlices(sliced, rows, temperature, request.optimizer, uses);
      return result;
    } finally {
      loss.release();
    }
  }

  private dLogitsFor(rows: number): GPUBuffer {
    if (this.dLogits?.rows === rows) return this.dLogits.buffer;
    this.releaseDLogits();
    const buffer = this.gpu.storage(rows * this.vocab * 4, 'd logits');
    this.dLogits = { rows, buffer };
    return buffer;
  }

  private releaseDLogits(): void {
    if (this.dLogits) this.gpu.pool.release(this.dLogits.buffer);
    this.dLogits = undefined;
  }

  private sliceBuffersFor(rows: number): SliceBuffers {
    if (this.sliceBuffers?.rows === rows) return this.sliceBuffers;
    this.releaseSliceBuffers();
    const f32 = (n: number, label: string) => this.gpu.storage(n * 4, label);
    this.sliceBuffers = {
      rows,
      targets: f32(rows, 'micro-batch targets'),
      logp: f32(rows, 'micro-batch logp'),
      entropy: f32(rows, 'micro-batch entropy'),
      dLogp: f32(rows, 'micro-batch d logp'),
      dEntropy: f32(rows, 'micro-batch d entropy'),
    };
    return this.sliceBuffers;
  }

  private releaseSliceBuffers(): void {
    const sb = this.sliceBuffers;
    if (!sb) return;
    for (const buffer of [sb.targets, sb.logp, sb.entropy, sb.dLogp, sb.dEntropy]) {
      this.gpu.pool.release(buffer);
    }
    this.sliceBuffers = undefined;
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
        dLogits: this.dLogitsFor(rows),
      },
      rows,
      this.vocab,
      { temperature },
    );
    const dValues = uses.values ? lb.dValues : undefined;
    await this.network.encodeBackward(step, ws, this.dLogitsFor(rows), dValues);
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
