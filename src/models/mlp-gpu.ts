/**
 * The MLP on the GPU: the same composition as mlp-cpu.ts (its CPU twin), recorded as linear and
 * activation dispatches into a caller's CommandBatch — one command encoder per training step, no
 * readback inside it.
 *
 * Parameters and gradients each live in ONE buffer laid out by mlpLayout(); each tensor is bound as
 * a slice. Activations live in a workspace per batch size, kept across steps (a rollout batch, a
 * minibatch and an evaluation batch coexist), so a loop of one shape allocates nothing after the
 * first step. Parameters, gradients and activations are separate buffers: WebGPU forbids binding
 * one buffer writable and read-only in the same dispatch, even at disjoint ranges.
 *
 * Shapes: B = batch, D = inputs, H_l = hidden[l], A = outputs, L = hidden.length.
 * Dispatches: forward 2L + 1 (a linear and an activation per hidden layer, then the last linear);
 * backward 4L + 2 (dW and db per layer, dx for every layer but the first, L activations).
 */
import type { BufferRef, CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { encodeActivationBackward, encodeActivationForward } from '../gpu/kernels/nn/activation';
import { encodeLinearBackward, encodeLinearForward } from '../gpu/kernels/nn/linear';
import { checkInt } from '../ops/validate';
import { checkMlpBatch, checkMlpParams, MLP_MAX_BATCH } from './mlp-cpu';
import { type MlpConfig, checkMlpConfig, mlpLayerNames, mlpLayout, mlpWidths } from './mlp-params';
import type { ParamLayout } from './param-layout';

/** Activations and backward scratch for one batch size B. */
class Workspace {
  readonly obs: GPUBuffer; // (B, D)
  readonly pre: GPUBuffer[]; // z_l (B, H_l), one per hidden layer
  readonly hidden: GPUBuffer[]; // x_{l+1} = f(z_l) (B, H_l), one per hidden layer
  readonly out: GPUBuffer; // (B, A) logits or values
  // Backward scratch, (B, max H) each: dx of a layer, then dz after the activation backward.
  // Two buffers, so no dispatch reads and writes the same one.
  readonly dx: GPUBuffer;
  readonly dz: GPUBuffer;
  private readonly owned: GPUBuffer[] = [];

  constructor(
    private readonly gpu: GpuContext,
    config: MlpConfig,
    readonly batch: number,
  ) {
    const f32 = (elements: number, label: string) => this.own(gpu.storage(elements * 4, label));
    this.obs = f32(batch * config.inputs, 'mlp obs');
    this.pre = config.hidden.map((h, l) => f32(batch * h, `mlp l${l} pre`));
    this.hidden = config.hidden.map((h, l) => f32(batch * h, `mlp l${l} act`));
    this.out = f32(batch * config.outputs, 'mlp out');
    const widest = Math.max(...config.hidden);
    this.dx = f32(batch * widest, 'mlp d hidden');
    this.dz = f32(batch * widest, 'mlp d pre');
  }

  release(): void {
    for (const buffer of this.owned.splice(0)) this.gpu.pool.release(buffer);
  }

  private own(buffer: GPUBuffer): GPUBuffer {
    this.owned.push(buffer);
    return buffer;
  }
}

const MAX_WORKSPACES = 4;

export class MlpGpu {
  readonly layout: ParamLayout;
  readonly params: GPUBuffer;
  readonly grads: GPUBuffer;
  /** Workspaces by batch size, most recently used last. */
  private readonly workspaces = new Map<number, Workspace>();

  constructor(
    readonly gpu: GpuContext,
    readonly config: MlpConfig,
    initial: Float32Array,
  ) {
    checkMlpConfig(config);
    this.layout = mlpLayout(config);
    checkMlpParams(this.layout, initial);
    this.params = gpu.storage(this.layout.total * 4, 'mlp params');
    this.writeParams(initial);
    this.grads = gpu.storage(this.layout.total * 4, 'mlp grads');
    // Padding between tensors is never written by a kernel; it must read as zero in the grad norm.
    const batch = gpu.beginBatch('mlp grads: zero');
    batch.encoder.clearBuffer(this.grads);
    batch.submit();
  }

  /** The workspace for `batch` rows; the least recently used of more than four is released. */
  workspaceFor(batch: number): Workspace {
    checkInt('mlp', 'batch', batch, 1, MLP_MAX_BATCH);
    const found = this.workspaces.get(batch) ?? new Workspace(this.gpu, this.config, batch);
    this.workspaces.delete(batch);
    this.workspaces.set(batch, found);
    if (this.workspaces.size > MAX_WORKSPACES) {
      const [oldest, ws] = this.workspaces.entries().next().value!;
      ws.release();
      this.workspaces.delete(oldest);
    }
    return found;
  }

  /** Uploads observations (B, D) into the workspace for B (a queue write, no allocation). */
  writeObservations(obs: Float32Array, batch: number): Workspace {
    checkMlpBatch(this.config, obs, batch);
    const ws = this.workspaceFor(batch);
    this.gpu.device.queue.writeBuffer(ws.obs, 0, obs.buffer, obs.byteOffset, obs.byteLength);
    return ws;
  }

  /** Records the forward pass of ws.obs: ws.out (B, A). */
  async encodeForward(batch: CommandBatch, ws: Workspace): Promise<void> {
    const { gpu, config, layout } = this;
    const widths = mlpWidths(config);
    const rows = ws.batch;
    const p = (name: string) => layout.slice(this.params, name);
    let x: GPUBuffer = ws.obs;
    for (let l = 0; l <= config.hidden.length; l++) {
      const n = mlpLayerNames(l);
      const shape = { rows, inDim: widths[l]!, outDim: widths[l + 1]! };
      const y = ws.pre[l] ?? ws.out;
      await encodeLinearForward(gpu, batch, { x, w: p(n.w), b: p(n.b), y }, shape);
      if (l < config.hidden.length) {
        x = ws.hidden[l]!;
        await encodeActivationForward(
          gpu,
          batch,
          { x: y, y: x },
          rows * shape.outDim,
          config.activation,
        );
      }
    }
  }

  /**
   * Records the backward pass from dout (B, A) — any buffer or slice other than this model's — into
   * this.grads (overwritten, not accumulated). The forward pass of the same workspace must have been
   * recorded before it, with the same parameters.
   */
  async encodeBackward(batch: CommandBatch, ws: Workspace, dout: BufferRef): Promise<void> {
    const { gpu, config, layout } = this;
    const widths = mlpWidths(config);
    const rows = ws.batch;
    const p = (name: string) => layout.slice(this.params, name);
    const g = (name: string) => layout.slice(this.grads, name);
    let dy: BufferRef = dout;
    for (let l = config.hidden.length; l >= 0; l--) {
      const n = mlpLayerNames(l);
      const shape = { rows, inDim: widths[l]!, outDim: widths[l + 1]! };
      const x = l > 0 ? ws.hidden[l - 1]! : ws.obs;
      await encodeLinearBackward(
        gpu,
        batch,
        // dx of the first layer (d obs) is not needed: left unbound, its matmul is skipped.
        { dy, x, w: p(n.w), ...(l > 0 ? { dx: ws.dx } : {}), dw: g(n.w), db: g(n.b) },
        shape,
      );
      if (l > 0) {
        // dz_{l−1} = dx · f′(z_{l−1}), from ws.dx into ws.dz: the next layer's dy.
        await encodeActivationBackward(
          gpu,
          batch,
          { dy: ws.dx, x: ws.pre[l - 1]!, dx: ws.dz },
          rows * shape.inDim,
          config.activation,
        );
        dy = ws.dz;
      }
    }
  }

  /** Copies the parameters back (a sync point). */
  async readParams(): Promise<Float32Array> {
    return this.gpu.readF32(this.params, this.layout.total);
  }

  /** Copies the gradients back (a sync point). */
  async readGrads(): Promise<Float32Array> {
    return this.gpu.readF32(this.grads, this.layout.total);
  }

  /** Replaces the parameters (a queue write; e.g. loading a checkpoint). */
  writeParams(params: Float32Array): void {
    checkMlpParams(this.layout, params);
    this.gpu.device.queue.writeBuffer(
      this.params,
      0,
      params.buffer,
      params.byteOffset,
      params.byteLength,
    );
  }

  release(): void {
    for (const ws of this.workspaces.values()) ws.release();
    this.workspaces.clear();
    this.gpu.pool.release(this.params);
    this.gpu.pool.release(this.grads);
  }
}

export type { Workspace as MlpWorkspace };
