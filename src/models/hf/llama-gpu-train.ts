/**
 * A LoRA training pass of a Llama-family model on the GPU: the forward with every activation the
 * backward reads kept per layer, and the backward to the adapters' gradients with the base frozen —
 * the twin of llama-cpu.ts's llamaForward and llama-cpu-backward.ts's llamaLoraBackward, composed
 * of the kernels those ops already have (no new WGSL).
 *
 * Forward (recordBlockInto with per-layer buffers): block l reads xs[l] and writes xs[l + 1];
 * its norms, q/k/v, rotated q/k, attention probabilities, attention output, xMid, gate/up/h and
 * each adapter's u stay in the layer's own buffers. Then logits (N, V) = head(norm(xs[L])).
 *
 * Backward from dLogits (N, V), per block reversed (through the base only dx = dy·W, never a dW):
 *   dRes  = norm_final′(dLogits·W_head)
 *   dh    = down′(dRes);  dg, du = swiglu′(dh);  dXn2 = gate′(dg) + up′(du)
 *   dRes += norm_post′(dXn2)                                           (dRes is now ∂L/∂xMid)
 *   dAttn = o′(dRes);  dq, dk, dv = attention′(dAttn);  dq, dk = rotary⁻¹, then q/k norm′ (Qwen3)
 *   dXn   = q′(dq) + k′(dk) + v′(dv);  dRes += norm_in′(dXn)                (∂L/∂ the block's x)
 * where each projection′ of an adapted module also writes dA, dB into the gradient buffer (in the
 * 'lora' group's layout, so AdamW and the gradient norm see one vector) and adds its share of dx.
 * The embedding is frozen: the walk stops at the first block.
 *
 * Shapes: B = batch, T = seq, N = B·T rows, C = width, NH = heads, NKV = kvHeads, hs = headDim,
 * F = mlpWidth, V = vocab, r = rank.
 */
import type { BufferRef, CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { encodeGqaAttentionBackward } from '../../gpu/kernels/nn/attention-gqa';
import { encodeLoraBackward } from '../../gpu/kernels/nn/lora';
import { encodeRmsNormBackward } from '../../gpu/kernels/nn/rms-norm';
import { encodeRotaryHeads } from '../../gpu/kernels/nn/rotary-heads';
import { encodeSwigluBackward } from '../../gpu/kernels/nn/swiglu';
import { OpInputError } from '../../ops/errors';
import { checkTokenIds } from '../../ops/nn/embedding';
import type { Ints } from '../../ops/nn/floats';
import { rotaryTable } from '../../ops/nn/rotary';
import { checkInt, checkLength } from '../../ops/validate';
import { type BlockBuffers, recordBlockInto, recordEmbed, recordHead } from './llama-gpu';
import { type GpuRotaryTable, recordLinearInputGrad, uploadRotaryTable } from './llama-gpu-ops';
import { type LlamaGpuLora, LoraScratch, blockLoraGpu } from './llama-gpu-lora';
import type { GpuLinearWeights, LlamaGpuWeights } from './llama-gpu-weights';
import { type LoraModule, loraTensorName } from './llama-lora';

const OP = 'llamaLoraPassGpu';

/** Buffers of the backward, reused by every layer. */
interface BackwardScratch {
  dHead: GPUBuffer; // (N, C)
  dRes: GPUBuffer; // (N, C) the residual stream's gradient
  dXn: GPUBuffer; // (N, C) a norm's output gradient
  dh: GPUBuffer; // (N, F)
  dg: GPUBuffer; // (N, F)
  du: GPUBuffer; // (N, F)
  dAttn: GPUBuffer; // (N, NH·hs)
  dq: GPUBuffer; // (N, NH·hs)
  dk: GPUBuffer; // (N, NKV·hs)
  dv: GPUBuffer; // (N, NKV·hs)
  dqPre: GPUBuffer; // (N, NH·hs) before Qwen3's q norm
  dkPre: GPUBuffer; // (N, NKV·hs)
  dscores: GPUBuffer; // (B, NH, T, T)
}

/** One (B, T) LoRA training pass: its kept activations and the backward's scratch. */
export class LlamaLoraPass {
  readonly rows: number;
  readonly tokens: GPUBuffer; // (N) u32
  readonly positions: GPUBuffer; // (N) u32
  readonly logits: GPUBuffer; // (N, V)
  /** xs[l]: block l's input; xs[L]: the last block's output. */
  private readonly xs: GPUBuffer[] = [];
  private readonly blocks: BlockBuffers[] = [];
  private readonly xnFinal: GPUBuffer;
  private readonly rstdFinal: GPUBuffer;
  private readonly branch: GPUBuffer;
  private readonly scratch: LoraScratch | undefined;
  private readonly grad: BackwardScratch;
  private readonly table: GpuRotaryTable;
  private readonly owned: GPUBuffer[] = [];

  constructor(
    private readonly gpu: GpuContext,
    readonly weights: LlamaGpuWeights,
    /** The adapters to train; none: the base alone (a KL reference's scoring), no backward. */
    readonly adapters: LlamaGpuLora | undefined,
    readonly batch: number,
    readonly seq: number,
  ) {
    const { spec } = weights;
    checkInt(OP, 'batch', batch, 1, 2 ** 16);
    checkInt(OP, 'seq', seq, 1, spec.context);
    if (adapters && adapters.layers.length !== spec.layers) {
      throw new OpInputError(
        OP,
        'adapters',
        `has adapters for ${adapters.layers.length} layers, the model has ${spec.layers}`,
      );
    }
    const N = batch * seq;
    this.rows = N;
    const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, vocab: V } = spec;
    const f32 = (elements: number, label: string) => {
      const buffer = gpu.storage(Math.max(1, elements) * 4, `llama train ${label}`);
      this.owned.push(buffer);
      return buffer;
    };
    const qkNorm = spec.qkNorm;
    this.tokens = f32(N, 'tokens');
    this.positions = f32(N, 'positions');
    this.logits = f32(N * V, 'logits');
    this.branch = f32(N * C, 'branch');
    this.xnFinal = f32(N * C, 'final norm');
    this.rstdFinal = f32(N, 'final rstd');
    this.xs.push(f32(N * C, 'x 0'));
    for (let l = 0; l < spec.layers; l++) {
      const loraU: Partial<Record<LoraModule, GPUBuffer>> = {};
      for (const module of Object.keys(adapters?.layers[l] ?? {}) as LoraModule[]) {
        loraU[module] = f32(N * adapters!.settings.rank, `${l} ${module} u`);
      }
      this.xs.push(f32(N * C, `x ${l + 1}`));
      this.blocks.push({
        batch,
        seq,
        positions: this.positions,
        x: this.xs[l]!,
        xMid: f32(N * C, `${l} xMid`),
        out: this.xs[l + 1]!,
        xn: f32(N * C, `${l} xn`),
        rstdIn: f32(N, `${l} rstd in`),
        xn2: f32(N * C, `${l} xn2`),
        rstdPost: f32(N, `${l} rstd post`),
        q: f32(N * NH * hs, `${l} q`),
        k: f32(N * NKV * hs, `${l} k`),
        v: f32(N * NKV * hs, `${l} v`),
        qNormed: f32(qkNorm ? N * NH * hs : 1, `${l} q normed`),
        kNormed: f32(qkNorm ? N * NKV * hs : 1, `${l} k normed`),
        qNormRstd: f32(qkNorm ? N * NH : 1, `${l} q norm rstd`),
        kNormRstd: f32(qkNorm ? N * NKV : 1, `${l} k norm rstd`),
        qRot: f32(N * NH * hs, `${l} q rotated`),
        kRot: f32(N * NKV * hs, `${l} k rotated`),
        attn: f32(N * NH * hs, `${l} attention`),
        probs: f32(batch * NH * seq * seq, `${l} probs`),
        branch: this.branch,
        gate: f32(N * F, `${l} gate`),
        up: f32(N * F, `${l} up`),
        h: f32(N * F, `${l} h`),
        loraU,
      });
    }
    this.grad = {
      dHead: f32(N * C, 'dHead'),
      dRes: f32(N * C, 'dRes'),
      dXn: f32(N * C, 'dXn'),
      dh: f32(N * F, 'dh'),
      dg: f32(N * F, 'dg'),
      du: f32(N * F, 'du'),
      dAttn: f32(N * NH * hs, 'dAttn'),
      dq: f32(N * NH * hs, 'dq'),
      dk: f32(N * NKV * hs, 'dk'),
      dv: f32(N * NKV * hs, 'dv'),
      dqPre: f32(qkNorm ? N * NH * hs : 1, 'dq before norm'),
      dkPre: f32(qkNorm ? N * NKV * hs : 1, 'dk before norm'),
      dscores: f32(batch * NH * seq * seq, 'dscores'),
    };
    this.scratch = adapters && new LoraScratch(gpu, N, adapters.settings.rank);
    this.table = uploadRotaryTable(gpu, rotaryTable(seq, hs, spec.rotaryBase));
    const positions = new Uint32Array(N);
    for (let r = 0; r < N; r++) positions[r] = r % seq;
    gpu.device.queue.writeBuffer(this.positions, 0, positions);
  }

  /** Writes the B sequences of T token ids (row b·T + t at position t). */
  writeTokens(ids: Ints): void {
    checkLength(OP, 'ids', ids, this.rows, 'batch × seq');
    checkTokenIds(OP, ids, this.weights.spec.vocab, this.seq);
    this.gpu.device.queue.writeBuffer(this.tokens, 0, Int32Array.from(ids));
  }

  /** Records the forward with the adapters: this.logits (N, V), every activation kept. */
  async recordForward(commands: CommandBatch): Promise<void> {
    const { gpu, weights } = this;
    await recordEmbed(gpu, commands, weights.embed, {
      tokens: this.tokens,
      x: this.xs[0]!,
      rows: this.rows,
    });
    for (const [l, layer] of weights.layers.entries()) {
      const lora = blockLoraGpu(this.adapters, this.scratch, l);
      await recordBlockInto(
        gpu,
        commands,
        weights.spec,
        layer,
        this.blocks[l]!,
        this.table,
        undefined,
        lora,
      );
    }
    const head = {
      x: this.xs[weights.spec.layers]!,
      xn: this.xnFinal,
      rstd: this.rstdFinal,
      logits: this.logits,
      rows: this.rows,
    };
    await recordHead(gpu, commands, weights, head);
  }

  /**
   * Records the adapters' gradients into `grads` ((adapters.layout.total) f32, the 'lora' group's
   * layout; every tensor overwritten, the alignment padding zeroed — or, with `accumulate`, added
   * to what it holds: a micro-batch after the first) from dLogits (N, V) = ∂L/∂logits of the
   * forward recorded last.
   */
  async recordBackward(
    commands: CommandBatch,
    dLogits: BufferRef,
    grads: GPUBuffer,
    accumulate = false,
  ): Promise<void> {
    const { gpu, weights, adapters, scratch, grad: s } = this;
    if (!adapters || !scratch) {
      throw new OpInputError(OP, 'adapters', 'none: a pass of the base alone has no backward');
    }
    const { spec } = weights;
    const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
    const N = this.rows;
    const total = adapters.layout.total;
    if (grads.size < total * 4) {
      throw new OpInputError(
        OP,
        'grads',
        `must hold ${total} f32 (${total * 4} bytes), got ${grads.size}`,
      );
    }
    if (total > 0 && !accumulate) commands.clear(grads, total * 4);
    const rank = adapters.settings.rank;
    const norm = { rows: N, cols: C };

    await recordLinearInputGrad(gpu, commands, weights.lmHead, dLogits, s.dHead, N, false);
    await encodeRmsNormBackward(
      gpu,
      commands,
      {
        dout: s.dHead,
        x: this.xs[spec.layers]!,
        w: weights.norm,
        rstd: this.rstdFinal,
        dx: s.dRes,
      },
      norm,
    );
    for (let l = spec.layers - 1; l >= 0; l--) {
      const layer = weights.layers[l]!;
      const b = this.blocks[l]!;
      /**
       * dInput (=, or += with `addToInput`: another projection of the same input) ∂L/∂input of
       * one projection, and its adapter's dA, dB (added to the buffer's with `accumulate`).
       */
      const project = async (
        module: LoraModule,
        linear: GpuLinearWeights,
        dy: GPUBuffer,
        input: GPUBuffer,
        dInput: GPUBuffer,
        addToInput: boolean,
      ) => {
        await recordLinearInputGrad(gpu, commands, linear, dy, dInput, N, addToInput);
        const adapter = adapters.layers[l]![module];
        const u = b.loraU?.[module];
        if (!adapter || !u) return;
        const buffers = {
          dy,
          x: input,
          u,
          a: adapter.a,
          b: adapter.b,
          dA: adapters.layout.slice(grads, loraTensorName(l, module, 'A')),
          dB: adapters.layout.slice(grads, loraTensorName(l, module, 'B')),
          dx: dInput,
          du: scratch.u,
          t: scratch.t,
        };
        const shape = { rows: N, inDim: adapter.inDim, outDim: adapter.outDim, rank };
        await encodeLoraBackward(gpu, commands, buffers, shape, adapters.scale, {
          accumulateDx: true,
          accumulateGrads: accumulate,
        });
      };

      // MLP: out = xMid + down(silu(gate(xn2)) ⊙ up(xn2)).
      await project('down_proj', layer.down, s.dRes, b.h, s.dh, false);
      await encodeSwigluBackward(
        gpu,
        commands,
        { dh: s.dh, g: b.gate, u: b.up, dg: s.dg, du: s.du },
        N * F,
      );
      await project('gate_proj', layer.gate, s.dg, b.xn2, s.dXn, false);
      await project('up_proj', layer.up, s.du, b.xn2, s.dXn, true);
      await encodeRmsNormBackward(
        gpu,
        commands,
        { dout: s.dXn, x: b.xMid, w: layer.postNorm, rstd: b.rstdPost, dx: s.dRes },
        norm,
        { accumulateDx: true },
      );

      // Attention: xMid = x + o(attention(rotary(norm(q)), rotary(norm(k)), v)).
      await project('o_proj', layer.o, s.dRes, b.attn, s.dAttn, false);
      await encodeGqaAttentionBackward(
        gpu,
        commands,
        {
          dout: s.dAttn,
          q: b.qRot,
          k: b.kRot,
          v: b.v,
          probs: b.probs!,
          dscores: s.dscores,
          dq: s.dq,
          dk: s.dk,
          dv: s.dv,
        },
        { batch: this.batch, seq: this.seq, heads: NH, kvHeads: NKV, headSize: hs },
      );
      const rotate = (x: GPUBuffer, heads: number) =>
        encodeRotaryHeads(
          gpu,
          commands,
          { x, positions: this.positions, cos: this.table.cos, sin: this.table.sin },
          { rows: N, heads, headSize: hs, tablePositions: this.table.positions },
          { inverse: true },
        );
      await rotate(s.dq, NH);
      await rotate(s.dk, NKV);
      let dq = s.dq;
      let dk = s.dk;
      if (layer.qNorm && layer.kNorm) {
        await encodeRmsNormBackward(
          gpu,
          commands,
          { dout: s.dq, x: b.q, w: layer.qNorm, rstd: b.qNormRstd, dx: s.dqPre },
          { rows: N * NH, cols: hs },
        );
        await encodeRmsNormBackward(
          gpu,
          commands,
          { dout: s.dk, x: b.k, w: layer.kNorm, rstd: b.kNormRstd, dx: s.dkPre },
          { rows: N * NKV, cols: hs },
        );
        dq = s.dqPre;
        dk = s.dkPre;
      }
      await project('q_proj', layer.q, dq, b.xn, s.dXn, false);
      await project('k_proj', layer.k, dk, b.xn, s.dXn, true);
      await project('v_proj', layer.v, s.dv, b.xn, s.dXn, true);
      await encodeRmsNormBackward(
        gpu,
        commands,
        { dout: s.dXn, x: b.x, w: layer.inputNorm, rstd: b.rstdIn, dx: s.dRes },
        norm,
        { accumulateDx: true },
      );
    }
  }

  release(): void {
    this.scratch?.release();
    this.table.release();
    for (const buffer of this.owned.splice(0)) this.gpu.pool.release(buffer);
  }
}

/**
 * One forward and LoRA backward, read back: the logits (B·T, V) of `ids` with the adapters, and
 * the adapters' gradients (adapters.layout.total) given dLogits (B·T, V). The convenience path
 * (tests, checks); a trainer keeps a LlamaLoraPass and its buffers on the GPU.
 */
export async function llamaLoraGradientsGpu(
  gpu: GpuContext,
  weights: LlamaGpuWeights,
  adapters: LlamaGpuLora,
  ids: Ints,
  shape: { batch: number; seq: number },
  dLogits: Float32Array,
): Promise<{ logits: Float32Array; grads: Float32Array }> {
  const pass = new LlamaLoraPass(gpu, weights, adapters, shape.batch, shape.seq);
  const N = pass.rows;
  const V = weights.spec.vocab;
  const total = adapters.layout.total;
  const dLogitsBuffer = gpu.upload(dLogits, 'llama train dLogits');
  const grads = gpu.storage(Math.max(1, total) * 4, 'llama train lora grads');
  try {
    checkLength(OP, 'dLogits', dLogits, N * V, 'batch × seq × vocab');
    pass.writeTokens(ids);
    const commands = gpu.beginBatch(OP);
    await pass.recordForward(commands);
    await pass.recordBackward(commands, dLogitsBuffer, grads);
    commands.submit();
    const [logits, out] = await Promise.all([
      gpu.readF32(pass.logits, N * V),
      gpu.readF32(grads, total),
    ]);
    return { logits, grads: out };
  } finally {
    gpu.pool.release(dLogitsBuffer);
    gpu.pool.release(grads);
    pass.release();
  }
}
