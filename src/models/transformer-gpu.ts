/**
 * The transformer on the GPU: the same composition as transformer-cpu.ts (its CPU twin), recorded
 * as kernel dispatches into a caller's CommandBatch — one command encoder per training step, no
 * readback inside it.
 *
 * Parameters and gradients each live in ONE buffer laid out by ParamLayout; each tensor is bound as
 * a slice. Activations live in a workspace sized for one (B, T) and kept across steps, so a loop
 * over steps of one shape allocates nothing after the first (the pool stays flat).
 *
 * Shapes: B = batch, T = seq, C = width, NH = heads, V = vocab; rows = B·T.
 */
import type { BufferRef, CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { encodeActivationBackward, encodeActivationForward } from '../gpu/kernels/nn/activation';
import { encodeAdd } from '../gpu/kernels/nn/add';
import { encodeAttentionBackward, encodeAttentionForward } from '../gpu/kernels/nn/attention';
import { encodeAttentionDecode } from '../gpu/kernels/nn/attention-decode';
import { encodeEmbeddingBackward, encodeEmbeddingForward } from '../gpu/kernels/nn/embedding';
import { encodeLayerNormBackward, encodeLayerNormForward } from '../gpu/kernels/nn/layer-norm';
import { encodeLinearBackward, encodeLinearForward } from '../gpu/kernels/nn/linear';
import { encodeRotary, rotaryTableF32 } from '../gpu/kernels/nn/rotary';
import type { Ints } from '../ops/nn/floats';
import type { ParamLayout } from './param-layout';
import { rotaryTableFor } from './rotary-table';
import { usesRotary, type TransformerConfig } from './transformer-config';
import { checkTransformerBatch } from './transformer-cpu';
import { blockParamNames, lmHeadName, transformerLayout } from './transformer-params';

interface LayerNormBuffers {
  out: GPUBuffer;
  mean: GPUBuffer;
  rstd: GPUBuffer;
}

interface BlockBuffers {
  input: GPUBuffer; // (rows, C)
  ln1: LayerNormBuffers;
  qkv: GPUBuffer; // (rows, 3C), q and k rotated with rotary positions
  attn: GPUBuffer; // (rows, C)
  probs: GPUBuffer; // (B, NH, T, T)
  res1: GPUBuffer; // (rows, C)
  ln2: LayerNormBuffers;
  fc: GPUBuffer; // (rows, 4C)
  gelu: GPUBuffer; // (rows, 4C)
}

/** Activations and backward scratch for one (B, T). */
class Workspace {
  readonly tokens: GPUBuffer; // (rows) i32
  readonly blocks: BlockBuffers[];
  readonly final: GPUBuffer; // (rows, C)
  readonly lnf: LayerNormBuffers;
  readonly logits: GPUBuffer; // (rows, V)
  readonly values: GPUBuffer | undefined; // (rows)
  readonly tmp: GPUBuffer; // (rows, C) a branch output before its residual add
  // Backward scratch.
  readonly dx: GPUBuffer; // (rows, C) gradient of the residual stream
  readonly dln: GPUBuffer; // (rows, C)
  readonly dattn: GPUBuffer; // (rows, C)
  readonly dqkv: GPUBuffer; // (rows, 3C)
  readonly dgelu: GPUBuffer; // (rows, 4C)
  readonly dfc: GPUBuffer; // (rows, 4C)
  readonly dscores: GPUBuffer; // (B, NH, T, T)
  private readonly owned: GPUBuffer[] = [];

  constructor(
    private readonly gpu: GpuContext,
    config: TransformerConfig,
    readonly batch: number,
    readonly seq: number,
  ) {
    const rows = batch * seq;
    const { width: C, heads: NH, vocab: V } = config;
    const f32 = (elements: number, label: string) => this.own(gpu.storage(elements * 4, label));
    const ln = (label: string): LayerNormBuffers => ({
      out: f32(rows * C, `${label} out`),
      mean: f32(rows, `${label} mean`),
      rstd: f32(rows, `${label} rstd`),
    });
    this.tokens = f32(rows, 'tokens');
    this.blocks = [];
    for (let l = 0; l < config.layers; l++) {
      this.blocks.push({
        input: f32(rows * C, `h${l} input`),
        ln1: ln(`h${l} ln1`),
        qkv: f32(rows * 3 * C, `h${l} qkv`),
        attn: f32(rows * C, `h${l} attn`),
        probs: f32(batch * NH * seq * seq, `h${l} probs`),
        res1: f32(rows * C, `h${l} res1`),
        ln2: ln(`h${l} ln2`),
        fc: f32(rows * 4 * C, `h${l} fc`),
        gelu: f32(rows * 4 * C, `h${l} gelu`),
      });
    }
    this.final = f32(rows * C, 'final');
    this.lnf = ln('lnf');
    this.logits = f32(rows * V, 'logits');
    this.values = config.valueHead ? f32(rows, 'values') : undefined;
    this.tmp = f32(rows * C, 'branch out');
    this.dx = f32(rows * C, 'd residual');
    this.dln = f32(rows * C, 'd ln');
    this.dattn = f32(rows * C, 'd attn');
    this.dqkv = f32(rows * 3 * C, 'd qkv');
    this.dgelu = f32(rows * 4 * C, 'd gelu');
    this.dfc = f32(rows * 4 * C, 'd fc');
    this.dscores = f32(batch * NH * seq * seq, 'd scores');
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

/** Keys and values per layer for generation: (B, NH, L, hs) each. */
export class GpuKvCache {
  readonly k: GPUBuffer[];
  readonly v: GPUBuffer[];

  constructor(
    private readonly gpu: GpuContext,
    config: TransformerConfig,
    readonly batch: number,
    readonly maxSeq: number,
  ) {
    const bytes = batch * maxSeq * config.width * 4;
    this.k = Array.from({ length: config.layers }, (_, l) => gpu.storage(bytes, `h${l} k cache`));
    this.v = Array.from({ length: config.layers }, (_, l) => gpu.storage(bytes, `h${l} v cache`));
  }

  release(): void {
    for (const buffer of [...this.k, ...this.v]) this.gpu.pool.release(buffer);
  }
}

/** A decode step: the workspace (B, 1) holds position `pos` of every row. */
export interface DecodeStep {
  pos: number;
  cache: GpuKvCache;
}

/** A rotary model's cos and sin tables on the GPU: (context, hs/2) f32 each. */
interface RotaryBuffers {
  cos: GPUBuffer;
  sin: GPUBuffer;
  half: number;
}

export class TransformerGpu {
  readonly layout: ParamLayout;
  readonly params: GPUBuffer;
  readonly grads: GPUBuffer;
  private readonly rotary: RotaryBuffers | undefined;
  /** Workspaces by "B×T", most recently used last; a training shape and a decode shape coexist. */
  private readonly workspaces = new Map<string, Workspace>();

  constructor(
    readonly gpu: GpuContext,
    readonly config: TransformerConfig,
    initial: Float32Array,
  ) {
    this.layout = transformerLayout(config);
    if (initial.length !== this.layout.total) {
      throw new Error(
        `TransformerGpu: parameters have ${initial.length} floats, the layout needs ${this.layout.total}`,
      );
    }
    this.params = gpu.storage(this.layout.total * 4, 'transformer params');
    gpu.device.queue.writeBuffer(
      this.params,
      0,
      initial.buffer,
      initial.byteOffset,
      initial.byteLength,
    );
    this.grads = gpu.storage(this.layout.total * 4, 'transformer grads');
    // Padding between tensors is never written by a kernel; it must read as zero in the grad norm.
    const batch = gpu.beginBatch('transformer grads: zero');
    batch.encoder.clearBuffer(this.grads);
    batch.submit();
    if (usesRotary(config)) {
      const table = rotaryTableFor(config);
      const f32 = rotaryTableF32(table);
      this.rotary = {
        cos: gpu.upload(f32.cos, 'rotary cos'),
        sin: gpu.upload(f32.sin, 'rotary sin'),
        half: table.half,
      };
    }
  }

  /** Records the rotation of q and k in `qkv` (rows, 3C) in place; nothing without rotary. */
  private async rotate(
    batch: CommandBatch,
    qkv: GPUBuffer,
    ws: Workspace,
    options: { posOffset?: number; inverse?: boolean },
  ): Promise<void> {
    if (!this.rotary) return;
    const { cos, sin, half } = this.rotary;
    const { heads, width: channels, context: positions } = this.config;
    await encodeRotary(
      this.gpu,
      batch,
      { qkv, cos, sin },
      { batch: ws.batch, seq: ws.seq, heads, channels, half, positions },
      options,
    );
  }

  /** The workspace for (batch, seq); the least recently used of more than four is released. */
  workspaceFor(batch: number, seq: number): Workspace {
    const key = `${batch}×${seq}`;
    const found = this.workspaces.get(key) ?? new Workspace(this.gpu, this.config, batch, seq);
    this.workspaces.delete(key);
    this.workspaces.set(key, found);
    if (this.workspaces.size > MAX_WORKSPACES) {
      const [oldest, ws] = this.workspaces.entries().next().value!;
      ws.release();
      this.workspaces.delete(oldest);
    }
    return found;
  }

  /** Uploads token ids (B·T) into the workspace (a queue write, no allocation). */
  writeTokens(tokens: Ints, batch: number, seq: number): Workspace {
    checkTransformerBatch(this.config, tokens, batch, seq);
    const ws = this.workspaceFor(batch, seq);
    this.gpu.device.queue.writeBuffer(
      ws.tokens,
      0,
      tokens.buffer,
      tokens.byteOffset,
      tokens.byteLength,
    );
    return ws;
  }

  /**
   * Records the forward pass of the workspace's tokens: ws.logits (rows, V) [and ws.values].
   * With `decode`, the workspace is (B, 1) at position decode.pos, attending through the KV cache.
   */
  async encodeForward(batch: CommandBatch, ws: Workspace, decode?: DecodeStep): Promise<void> {
    const { gpu, config, layout } = this;
    const { width: C, heads, vocab: V, context } = this.config;
    const rows = ws.batch * ws.seq;
    const p = (name: string) => layout.slice(this.params, name);
    const linearShape = (inDim: number, outDim: number) => ({ rows, inDim, outDim });
    const attnShape = { batch: ws.batch, seq: ws.seq, heads, channels: C };

    const first = ws.blocks[0]?.input ?? ws.final;
    await encodeEmbeddingForward(
      gpu,
      batch,
      { tokens: ws.tokens, wte: p('wte'), ...(this.rotary ? {} : { wpe: p('wpe') }), x: first },
      { batch: ws.batch, seq: ws.seq, channels: C, vocab: V, maxSeq: context },
      decode?.pos ?? 0,
    );
    for (let l = 0; l < config.layers; l++) {
      const n = blockParamNames(l);
      const b = ws.blocks[l]!;
      const next = ws.blocks[l + 1]?.input ?? ws.final;
      await this.layerNorm(batch, b.input, n.ln1Gamma, n.ln1Beta, b.ln1, rows);
      await encodeLinearForward(
        gpu,
        batch,
        { x: b.ln1.out, w: p(n.qkvW), b: p(n.qkvB), y: b.qkv },
        linearShape(C, 3 * C),
      );
      await this.rotate(batch, b.qkv, ws, { posOffset: decode?.pos ?? 0 });
      if (decode) {
        await encodeAttentionDecode(
          gpu,
          batch,
          { qkvStep: b.qkv, kCache: decode.cache.k[l]!, vCache: decode.cache.v[l]!, out: b.attn },
          decode.pos,
          { batch: ws.batch, heads, channels: C, maxSeq: decode.cache.maxSeq },
        );
      } else {
        await encodeAttentionForward(
          gpu,
          batch,
          { qkv: b.qkv, out: b.attn, probs: b.probs },
          attnShape,
        );
      }
      await encodeLinearForward(
        gpu,
        batch,
        { x: b.attn, w: p(n.projW), b: p(n.projB), y: ws.tmp },
        linearShape(C, C),
      );
      await encodeAdd(gpu, batch, { a: b.input, b: ws.tmp, out: b.res1 }, rows * C);
      await this.layerNorm(batch, b.res1, n.ln2Gamma, n.ln2Beta, b.ln2, rows);
      await encodeLinearForward(
        gpu,
        batch,
        { x: b.ln2.out, w: p(n.fcW), b: p(n.fcB), y: b.fc },
        linearShape(C, 4 * C),
      );
      await encodeActivationForward(gpu, batch, { x: b.fc, y: b.gelu }, rows * 4 * C, 'gelu');
      await encodeLinearForward(
        gpu,
        batch,
        { x: b.gelu, w: p(n.mlpProjW), b: p(n.mlpProjB), y: ws.tmp },
        linearShape(4 * C, C),
      );
      await encodeAdd(gpu, batch, { a: b.res1, b: ws.tmp, out: next }, rows * C);
    }
    await this.layerNorm(batch, ws.final, 'lnf.gamma', 'lnf.beta', ws.lnf, rows);
    await encodeLinearForward(
      gpu,
      batch,
      { x: ws.lnf.out, w: p(lmHeadName(config)), y: ws.logits },
      linearShape(C, V),
    );
    if (ws.values) {
      await encodeLinearForward(
        gpu,
        batch,
        { x: ws.lnf.out, w: p('value_head.w'), b: p('value_head.b'), y: ws.values },
        linearShape(C, 1),
      );
    }
  }

  /**
   * Records the backward pass from dlogits (rows, V) [and dvalues (rows)] into this.grads; the
   * forward pass of the same workspace must have been recorded before it.
   */
  async encodeBackward(
    batch: CommandBatch,
    ws: Workspace,
    dlogits: BufferRef,
    dvalues?: BufferRef,
  ): Promise<void> {
    const { gpu, config, layout } = this;
    const { width: C, heads, vocab: V, context } = config;
    const rows = ws.batch * ws.seq;
    const p = (name: string) => layout.slice(this.params, name);
    const g = (name: string) => layout.slice(this.grads, name);
    const linearShape = (inDim: number, outDim: number) => ({ rows, inDim, outDim });
    const attnShape = { batch: ws.batch, seq: ws.seq, heads, channels: C };
    if (dvalues && !ws.values)
      throw new Error('TransformerGpu: dvalues given without a value head');

    await encodeLinearBackward(
      gpu,
      batch,
      {
        dy: dlogits,
        x: ws.lnf.out,
        w: p(lmHeadName(config)),
        dx: ws.dln,
        dw: g(lmHeadName(config)),
      },
      linearShape(C, V),
    );
    if (dvalues) {
      await encodeLinearBackward(
        gpu,
        batch,
        {
          dy: dvalues,
          x: ws.lnf.out,
          w: p('value_head.w'),
          dx: ws.dln,
          dw: g('value_head.w'),
          db: g('value_head.b'),
        },
        linearShape(C, 1),
        { accumulateDx: true },
      );
    }
    await encodeLayerNormBackward(
      gpu,
      batch,
      {
        dout: ws.dln,
        x: ws.final,
        gamma: p('lnf.gamma'),
        mean: ws.lnf.mean,
        rstd: ws.lnf.rstd,
        dx: ws.dx,
        dgamma: g('lnf.gamma'),
        dbeta: g('lnf.beta'),
      },
      rows,
      C,
    );
    for (let l = config.layers - 1; l >= 0; l--) {
      const n = blockParamNames(l);
      const b = ws.blocks[l]!;
      // MLP branch; ws.dx holds d(block output).
      await encodeLinearBackward(
        gpu,
        batch,
        {
          dy: ws.dx,
          x: b.gelu,
          w: p(n.mlpProjW),
          dx: ws.dgelu,
          dw: g(n.mlpProjW),
          db: g(n.mlpProjB),
        },
        linearShape(4 * C, C),
      );
      await encodeActivationBackward(
        gpu,
        batch,
        { dy: ws.dgelu, x: b.fc, dx: ws.dfc },
        rows * 4 * C,
        'gelu',
      );
      await encodeLinearBackward(
        gpu,
        batch,
        { dy: ws.dfc, x: b.ln2.out, w: p(n.fcW), dx: ws.dln, dw: g(n.fcW), db: g(n.fcB) },
        linearShape(C, 4 * C),
      );
      // ws.dx += LN2 backward: now d(res1).
      await this.layerNormBackward(
        batch,
        ws.dln,
        b.res1,
        n.ln2Gamma,
        n.ln2Beta,
        b.ln2,
        ws.dx,
        rows,
      );
      // Attention branch.
      await encodeLinearBackward(
        gpu,
        batch,
        { dy: ws.dx, x: b.attn, w: p(n.projW), dx: ws.dattn, dw: g(n.projW), db: g(n.projB) },
        linearShape(C, C),
      );
      await encodeAttentionBackward(
        gpu,
        batch,
        { dout: ws.dattn, qkv: b.qkv, probs: b.probs, dqkv: ws.dqkv, dscores: ws.dscores },
        attnShape,
      );
      // d(rotated q, k) → d(q, k) as the linear layer produced them: the inverse rotation.
      await this.rotate(batch, ws.dqkv, ws, { inverse: true });
      await encodeLinearBackward(
        gpu,
        batch,
        { dy: ws.dqkv, x: b.ln1.out, w: p(n.qkvW), dx: ws.dln, dw: g(n.qkvW), db: g(n.qkvB) },
        linearShape(C, 3 * C),
      );
      // ws.dx += LN1 backward: now d(block input).
      await this.layerNormBackward(
        batch,
        ws.dln,
        b.input,
        n.ln1Gamma,
        n.ln1Beta,
        b.ln1,
        ws.dx,
        rows,
      );
    }
    await encodeEmbeddingBackward(
      gpu,
      batch,
      { dx: ws.dx, tokens: ws.tokens, dwte: g('wte'), ...(this.rotary ? {} : { dwpe: g('wpe') }) },
      { batch: ws.batch, seq: ws.seq, channels: C, vocab: V, maxSeq: context },
      { accumulateDwte: config.tiedEmbeddings },
    );
  }

  /** Copies the parameters back (a sync point). */
  async readParams(): Promise<Float32Array> {
    return this.gpu.readF32(this.params, this.layout.total);
  }

  async readGrads(): Promise<Float32Array> {
    return this.gpu.readF32(this.grads, this.layout.total);
  }

  writeParams(params: Float32Array): void {
    if (params.length !== this.layout.total) {
      throw new Error(
        `TransformerGpu.writeParams: ${params.length} floats, expected ${this.layout.total}`,
      );
    }
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
    if (this.rotary) {
      this.gpu.pool.release(this.rotary.cos);
      this.gpu.pool.release(this.rotary.sin);
    }
  }

  private async layerNorm(
    batch: CommandBatch,
    x: GPUBuffer,
    gamma: string,
    beta: string,
    out: LayerNormBuffers,
    rows: number,
  ): Promise<void> {
    const p = (name: string) => this.layout.slice(this.params, name);
    await encodeLayerNormForward(
      this.gpu,
      batch,
      { x, gamma: p(gamma), beta: p(beta), out: out.out, mean: out.mean, rstd: out.rstd },
      rows,
      this.config.width,
    );
  }

  /** dx += LayerNorm backward of dout; writes the gain and shift gradients. */
  private async layerNormBackward(
    batch: CommandBatch,
    dout: GPUBuffer,
    x: GPUBuffer,
    gamma: string,
    beta: string,
    saved: LayerNormBuffers,
    dx: GPUBuffer,
    rows: number,
  ): Promise<void> {
    const p = (name: string) => this.layout.slice(this.params, name);
    const g = (name: string) => this.layout.slice(this.grads, name);
    await encodeLayerNormBackward(
      this.gpu,
      batch,
      {
        dout,
        x,
        gamma: p(gamma),
        mean: saved.mean,
        rstd: saved.rstd,
        dx,
        dgamma: g(gamma),
        dbeta: g(beta),
      },
      rows,
      this.config.width,
      { accumulateDx: true },
    );
  }
}

export type { Workspace as TransformerWorkspace };
