/**
 * The Llama family's forward on the GPU — the composition of llama-cpu.ts (its CPU twin) recorded
 * as kernel dispatches into one CommandBatch, no readback inside. Per block, on x (N, C):
 *
 *   xn = rmsnorm(x)·w_in;  q, k, v = projections of xn (f16 or f32 weights, biases for Qwen2)
 *   q, k = per-head rmsnorm (Qwen3) → rotary at each row's position
 *   a = causal GQA attention(q, k, v);  x += a·Woᵀ
 *   xn2 = rmsnorm(x)·w_post;  x += (silu(xn2·Wgᵀ) ⊙ xn2·Wuᵀ)·Wdᵀ
 * then logits = rmsnorm(x)·w_norm·W_headᵀ, and teacher-forced log-probs of the next ids are the
 * only thing read back.
 *
 * Activations live in a workspace sized for one (B, T), reused across layers (a scoring pass
 * keeps nothing a backward would need; the LoRA trainer keeps per-layer activations itself).
 * Shapes: B = batch, T = seq, N = B·T rows, C = width, NH = heads, NKV = kvHeads, hs = headDim,
 * F = mlpWidth, V = vocab.
 */
import type { CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { encodeAddInto } from '../../gpu/kernels/nn/add';
import { encodeEmbeddingForward } from '../../gpu/kernels/nn/embedding';
import { encodeEmbeddingF16 } from '../../gpu/kernels/nn/embedding-f16';
import { encodeKvCacheAppend } from '../../gpu/kernels/nn/kv-cache';
import { encodeRmsNormForward } from '../../gpu/kernels/nn/rms-norm';
import { encodeSwigluForward } from '../../gpu/kernels/nn/swiglu';
import { encodeTokenLogprobs } from '../../gpu/kernels/token-logprobs';
import { OpInputError } from '../../ops/errors';
import type { Ints } from '../../ops/nn/floats';
import { checkTokenIds } from '../../ops/nn/embedding';
import { rotaryTable } from '../../ops/nn/rotary';
import { checkInt } from '../../ops/validate';
import type { ModelSpec } from '../model-spec';
import {
  type GpuRotaryTable,
  recordAttention,
  recordLinear,
  recordRotary,
  uploadRotaryTable,
} from './llama-gpu-ops';
import { type BlockLoraGpu, type LlamaGpuLora, LoraScratch, blockLoraGpu } from './llama-gpu-lora';
import type {
  GpuLinearWeights,
  GpuMatrix,
  LlamaGpuLayer,
  LlamaGpuWeights,
} from './llama-gpu-weights';
import type { LoraModule } from './llama-lora';

const OP = 'llamaForwardGpu';

/** Activations of one (B, T) pass, reused by every layer. */
export class LlamaWorkspace {
  readonly rows: number;
  readonly tokens: GPUBuffer; // (N) u32
  readonly positions: GPUBuffer; // (N) u32
  readonly x: GPUBuffer; // (N, C) residual stream
  readonly xn: GPUBuffer; // (N, C) a norm's output
  readonly rstd: GPUBuffer; // (N·NH) rstd of the last norm (sized for the per-head norms)
  readonly q: GPUBuffer; // (N, NH·hs)
  readonly k: GPUBuffer; // (N, NKV·hs)
  readonly v: GPUBuffer; // (N, NKV·hs)
  readonly qNormed: GPUBuffer; // (N, NH·hs) Qwen3's per-head norm output
  readonly kNormed: GPUBuffer; // (N, NKV·hs)
  readonly qRot: GPUBuffer; // (N, NH·hs)
  readonly kRot: GPUBuffer; // (N, NKV·hs)
  readonly attn: GPUBuffer; // (N, NH·hs)
  readonly branch: GPUBuffer; // (N, C) a branch's output before the residual add
  readonly gate: GPUBuffer; // (N, F)
  readonly up: GPUBuffer; // (N, F)
  readonly h: GPUBuffer; // (N, F)
  readonly logits: GPUBuffer; // (N, V)
  readonly targets: GPUBuffer; // (N) i32 next ids (0 where none)
  readonly logp: GPUBuffer; // (N)
  private readonly owned: GPUBuffer[] = [];

  constructor(
    private readonly gpu: GpuContext,
    spec: ModelSpec,
    readonly batch: number,
    readonly seq: number,
    /** false: no LM head on these rows (a generator's prefill): logits, targets, logp not held. */
    head = true,
  ) {
    const N = batch * seq;
    this.rows = N;
    const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, vocab: V } = spec;
    const f32 = (elements: number, label: string) => {
      const buffer = gpu.storage(Math.max(1, elements) * 4, `llama ${label}`);
      this.owned.push(buffer);
      return buffer;
    };
    this.tokens = f32(N, 'tokens');
    this.positions = f32(N, 'positions');
    this.x = f32(N * C, 'x');
    this.xn = f32(N * C, 'xn');
    this.rstd = f32(N * NH, 'rstd');
    this.q = f32(N * NH * hs, 'q');
    this.k = f32(N * NKV * hs, 'k');
    this.v = f32(N * NKV * hs, 'v');
    this.qNormed = f32(spec.qkNorm ? N * NH * hs : 1, 'q normed');
    this.kNormed = f32(spec.qkNorm ? N * NKV * hs : 1, 'k normed');
    this.qRot = f32(N * NH * hs, 'q rotated');
    this.kRot = f32(N * NKV * hs, 'k rotated');
    this.attn = f32(N * NH * hs, 'attention');
    this.branch = f32(N * C, 'branch');
    this.gate = f32(N * F, 'gate');
    this.up = f32(N * F, 'up');
    this.h = f32(N * F, 'h');
    // A prefill's B·P rows of logits would be the largest buffer of a generation, never read.
    this.logits = f32(head ? N * V : 1, 'logits');
    this.targets = f32(head ? N : 1, 'targets');
    this.logp = f32(head ? N : 1, 'logp');
  }

  /** The block's buffers over this workspace: the residual in place, one norm and rstd reused. */
  blockBuffers(): BlockBuffers {
    const { x, xn, rstd, q, k, v, qNormed, kNormed, qRot, kRot, attn, branch, gate, up, h } = this;
    return {
      batch: this.batch,
      seq: this.seq,
      positions: this.positions,
      x,
      xMid: x,
      out: x,
      xn,
      rstdIn: rstd,
      xn2: xn,
      rstdPost: rstd,
      q,
      k,
      v,
      qNormed,
      kNormed,
      qNormRstd: rstd,
      kNormRstd: rstd,
      qRot,
      kRot,
      attn,
      branch,
      gate,
      up,
      h,
    };
  }

  release(): void {
    for (const buffer of this.owned.splice(0)) this.gpu.pool.release(buffer);
  }
}

/** Records x (N, C) = the embedding rows of ws.tokens. */
export async function recordEmbed(
  gpu: GpuContext,
  batch: CommandBatch,
  embed: GpuMatrix,
  ws: Pick<LlamaWorkspace, 'tokens' | 'x' | 'rows'>,
): Promise<void> {
  const [V, C] = [embed.rows, embed.cols];
  // A table split by rows gathers part by part, each part writing the rows of its tokens.
  for (const part of embed.parts) {
    const buffers = { tokens: ws.tokens, wte: part.buffer, x: ws.x };
    if (embed.storage === 'f16') {
      await encodeEmbeddingF16(gpu, batch, buffers, { rows: ws.rows, channels: C, vocab: V }, part);
    } else {
      const shape = { batch: 1, seq: ws.rows, maxSeq: ws.rows, channels: C, vocab: V };
      await encodeEmbeddingForward(gpu, batch, buffers, shape, 0, part);
    }
  }
}

/** A KV cache a block appends its new k, v rows to and attends over: (B, capacity, NKV·hs). */
export interface BlockCache {
  k: GPUBuffer;
  v: GPUBuffer;
  capacity: number;
  /** Rows already cached per sequence: the new rows sit at positions past … past + T − 1. */
  past: number;
  /**
   * (B) u32, each sequence's own rows cached (≤ past, then their largest): prompts of different
   * lengths decoding in one batch. None: `past` for every sequence.
   */
  pasts?: GPUBuffer | undefined;
}

/**
 * Where one block reads and writes, on N = B·T rows. A pass that keeps nothing (scoring,
 * generation: LlamaWorkspace.blockBuffers) aliases x, xMid and out (the residual updated in
 * place), xn and xn2, and the rstds; a training pass (llama-gpu-train.ts) gives every one its own
 * buffer per layer, and probs and each adapter's u, so that the backward can read them.
 */
export interface BlockBuffers {
  batch: number;
  seq: number;
  positions: GPUBuffer; // (N) u32
  x: GPUBuffer; // (N, C) the block's input
  xMid: GPUBuffer; // (N, C) x + attention; may be x (in place)
  out: GPUBuffer; // (N, C) xMid + MLP; may be xMid (in place)
  xn: GPUBuffer; // (N, C) input norm
  rstdIn: GPUBuffer; // (N)
  xn2: GPUBuffer; // (N, C) post-attention norm
  rstdPost: GPUBuffer; // (N)
  q: GPUBuffer; // (N, NH·hs)
  k: GPUBuffer; // (N, NKV·hs)
  v: GPUBuffer; // (N, NKV·hs)
  qNormed: GPUBuffer; // (N, NH·hs) Qwen3's per-head norm output
  kNormed: GPUBuffer; // (N, NKV·hs)
  qNormRstd: GPUBuffer; // (N·NH)
  kNormRstd: GPUBuffer; // (N·NKV)
  qRot: GPUBuffer; // (N, NH·hs)
  kRot: GPUBuffer; // (N, NKV·hs)
  attn: GPUBuffer; // (N, NH·hs)
  /** (B, NH, T, T) attention probabilities, kept for a backward; left out: not written. */
  probs?: GPUBuffer;
  branch: GPUBuffer; // (N, C) a branch's output before the residual add
  gate: GPUBuffer; // (N, F)
  up: GPUBuffer; // (N, F)
  h: GPUBuffer; // (N, F)
  /** Each adapted projection's u (N, r), kept for a backward; left out: the scratch's, reused. */
  loraU?: Partial<Record<LoraModule, GPUBuffer>>;
}

/**
 * Records one block on ws.x in place (ws.x ← block(ws.x)). Without a cache the rows attend to
 * their own sequence (the teacher-forced pass); with one, k and v are appended to it and the rows
 * attend over everything cached (prefill and decoding). With `lora`, each projection the block's
 * adapters target adds its LoRA update.
 */
export async function recordBlock(
  gpu: GpuContext,
  batch: CommandBatch,
  spec: ModelSpec,
  layer: LlamaGpuLayer,
  ws: LlamaWorkspace,
  table: GpuRotaryTable,
  cache?: BlockCache,
  lora?: BlockLoraGpu,
): Promise<void> {
  await recordBlockInto(gpu, batch, spec, layer, ws.blockBuffers(), table, cache, lora);
}

/** Records one block from buffers.x to buffers.out (recordBlock's composition, any buffers). */
export async function recordBlockInto(
  gpu: GpuContext,
  batch: CommandBatch,
  spec: ModelSpec,
  layer: LlamaGpuLayer,
  b: BlockBuffers,
  table: GpuRotaryTable,
  cache?: BlockCache,
  lora?: BlockLoraGpu,
): Promise<void> {
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, normEps: eps } = spec;
  const N = b.batch * b.seq;
  const norm = { rows: N, cols: C, eps };
  const rms = (x: GPUBuffer, w: GPUBuffer, out: GPUBuffer, rstd: GPUBuffer, shape: typeof norm) =>
    encodeRmsNormForward(gpu, batch, { x, w, out, rstd }, shape);
  const linear = (
    weights: GpuLinearWeights,
    x: GPUBuffer,
    y: GPUBuffer,
    module: LoraModule,
  ): Promise<void> => {
    const u = b.loraU?.[module];
    return recordLinear(gpu, batch, weights, x, y, N, { block: lora, module, ...(u ? { u } : {}) });
  };
  /** residual ← from + branch: in place when they are one buffer. */
  const residual = async (from: GPUBuffer, to: GPUBuffer) => {
    if (to !== from) batch.copy(from, to, N * C * 4);
    await encodeAddInto(gpu, batch, { acc: to, x: b.branch }, N * C);
  };
  await rms(b.x, layer.inputNorm, b.xn, b.rstdIn, norm);
  await linear(layer.q, b.xn, b.q, 'q_proj');
  await linear(layer.k, b.xn, b.k, 'k_proj');
  await linear(layer.v, b.xn, b.v, 'v_proj');
  let q = b.q;
  let k = b.k;
  if (layer.qNorm && layer.kNorm) {
    // (N, H·hs) is (N·H, hs): one RMSNorm row per head.
    await rms(b.q, layer.qNorm, b.qNormed, b.qNormRstd, { rows: N * NH, cols: hs, eps });
    await rms(b.k, layer.kNorm, b.kNormed, b.kNormRstd, { rows: N * NKV, cols: hs, eps });
    q = b.qNormed;
    k = b.kNormed;
  }
  await recordRotary(gpu, batch, { x: q, out: b.qRot, positions: b.positions, table }, N, NH, hs);
  await recordRotary(gpu, batch, { x: k, out: b.kRot, positions: b.positions, table }, N, NKV, hs);
  const heads = { batch: b.batch, seq: b.seq, heads: NH, kvHeads: NKV, headSize: hs };
  if (cache) {
    const { past, capacity } = cache;
    await encodeKvCacheAppend(
      gpu,
      batch,
      { kNew: b.kRot, vNew: b.v, kCache: cache.k, vCache: cache.v, pasts: cache.pasts },
      { batch: b.batch, seq: b.seq, width: NKV * hs, capacity, past },
    );
    const buffers = { q: b.qRot, k: cache.k, v: cache.v, out: b.attn, pasts: cache.pasts };
    await recordAttention(gpu, batch, buffers, { ...heads, past, kvCapacity: capacity });
  } else {
    const probs = b.probs ? { probs: b.probs } : {};
    await recordAttention(
      gpu,
      batch,
      { q: b.qRot, k: b.kRot, v: b.v, out: b.attn, ...probs },
      heads,
    );
  }
  await linear(layer.o, b.attn, b.branch, 'o_proj');
  await residual(b.x, b.xMid);
  await rms(b.xMid, layer.postNorm, b.xn2, b.rstdPost, norm);
  await linear(layer.gate, b.xn2, b.gate, 'gate_proj');
  await linear(layer.up, b.xn2, b.up, 'up_proj');
  await encodeSwigluForward(gpu, batch, { g: b.gate, u: b.up, h: b.h }, N * F);
  await linear(layer.down, b.h, b.branch, 'down_proj');
  await residual(b.xMid, b.out);
}

/**
 * Per-layer KV caches (one k and one v buffer per block), each holding `past` rows per sequence,
 * or `pasts[b]` rows for sequence b (BlockCache's).
 */
export interface LayerCaches {
  k: readonly GPUBuffer[];
  v: readonly GPUBuffer[];
  capacity: number;
  past: number;
  pasts?: GPUBuffer | undefined;
}

/**
 * Records the embedding of ws.tokens and every block on it: ws.x (N, C) before the final norm.
 * Without caches the rows attend within their own sequence (teacher forcing); with them each
 * block appends its k and v and attends over what is cached (prefill: past 0; a decode step).
 */
export async function recordTrunk(
  gpu: GpuContext,
  batch: CommandBatch,
  weights: LlamaGpuWeights,
  ws: LlamaWorkspace,
  table: GpuRotaryTable,
  options: { caches?: LayerCaches; lora?: { adapters: LlamaGpuLora; scratch: LoraScratch } } = {},
): Promise<void> {
  const { caches, lora } = options;
  await recordEmbed(gpu, batch, weights.embed, ws);
  for (const [l, layer] of weights.layers.entries()) {
    const cache = caches && {
      k: caches.k[l]!,
      v: caches.v[l]!,
      capacity: caches.capacity,
      past: caches.past,
      pasts: caches.pasts,
    };
    const block = blockLoraGpu(lora?.adapters, lora?.scratch, l);
    await recordBlock(gpu, batch, weights.spec, layer, ws, table, cache, block);
  }
}

/**
 * Records the teacher-forced pass over ws.tokens (B sequences of T, row b·T + t at position t):
 * ws.logits (N, V). The rotary table must cover T positions.
 */
export async function recordLlamaForward(
  gpu: GpuContext,
  batch: CommandBatch,
  weights: LlamaGpuWeights,
  ws: LlamaWorkspace,
  table: GpuRotaryTable,
  lora?: { adapters: LlamaGpuLora; scratch: LoraScratch },
): Promise<void> {
  await recordTrunk(gpu, batch, weights, ws, table, lora ? { lora } : {});
  await recordHead(gpu, batch, weights, ws);
}

/** Records ws.logits (N, V) = LM head of the final norm of ws.x (ws.xn, ws.rstd: the norm's). */
export async function recordHead(
  gpu: GpuContext,
  batch: CommandBatch,
  weights: LlamaGpuWeights,
  ws: Pick<LlamaWorkspace, 'x' | 'xn' | 'rstd' | 'logits' | 'rows'>,
): Promise<void> {
  const { spec } = weights;
  const norm = { rows: ws.rows, cols: spec.width, eps: spec.normEps };
  const buffers = { x: ws.x, w: weights.norm, out: ws.xn, rstd: ws.rstd };
  await encodeRmsNormForward(gpu, batch, buffers, norm);
  await recordLinear(gpu, batch, weights.lmHead, ws.xn, ws.logits, ws.rows);
}

function checkScoreInput(spec: ModelSpec, ids: Ints, batch: number, seq: number): void {
  checkInt(OP, 'batch', batch, 1, 2 ** 16);
  checkInt(OP, 'seq', seq, 2, spec.context);
  if (ids.length !== batch * seq) {
    throw new OpInputError(
      OP,
      'ids',
      `must have batch × seq = ${batch} × ${seq} = ${batch * seq} elements, got ${ids.length}`,
    );
  }
  checkTokenIds(OP, ids, spec.vocab, seq);
}

/**
 * Teacher-forced scoring on the GPU, the twin of llamaScore(): logprobs (B, T − 1), entry (b, t)
 * = log p(ids[b, t + 1] | ids[b, ≤ t]) under softmax(logits / temperature), with `lora`'s
 * adapters applied when given (without: the base model, the KL reference). Only the N log-probs
 * are read back; the logits stay on the GPU.
 */
export async function llamaScoreGpu(
  gpu: GpuContext,
  weights: LlamaGpuWeights,
  ids: Ints,
  batch: number,
  seq: number,
  options: { temperature?: number; lora?: LlamaGpuLora | undefined } = {},
): Promise<Float32Array> {
  const { spec } = weights;
  checkScoreInput(spec, ids, batch, seq);
  const N = batch * seq;
  const adapters = options.lora;
  if (adapters && adapters.layers.length !== spec.layers) {
    throw new OpInputError(
      OP,
      'lora',
      `has adapters for ${adapters.layers.length} layers, the model has ${spec.layers}`,
    );
  }
  const ws = new LlamaWorkspace(gpu, spec, batch, seq);
  const table = uploadRotaryTable(gpu, rotaryTable(seq, spec.headDim, spec.rotaryBase));
  const scratch = adapters && new LoraScratch(gpu, N, adapters.settings.rank);
  try {
    const targets = new Int32Array(N);
    const positions = new Uint32Array(N);
    for (let r = 0; r < N; r++) {
      positions[r] = r % seq;
      targets[r] = r % seq < seq - 1 ? ids[r + 1]! : 0;
    }
    gpu.device.queue.writeBuffer(ws.tokens, 0, Int32Array.from(ids));
    gpu.device.queue.writeBuffer(ws.positions, 0, positions);
    gpu.device.queue.writeBuffer(ws.targets, 0, targets);
    const commands = gpu.beginBatch(OP);
    await recordLlamaForward(
      gpu,
      commands,
      weights,
      ws,
      table,
      adapters && scratch ? { adapters, scratch } : undefined,
    );
    await encodeTokenLogprobs(
      gpu,
      commands,
      { logits: ws.logits, targets: ws.targets, logp: ws.logp },
      N,
      spec.vocab,
      {
        withEntropy: false,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      },
    );
    commands.submit();
    const all = await gpu.readF32(ws.logp, N);
    const out = new Float32Array(batch * (seq - 1));
    for (let b = 0; b < batch; b++)
      out.set(all.subarray(b * seq, b * seq + seq - 1), b * (seq - 1));
    return out;
  } finally {
    scratch?.release();
    table.release();
    ws.release();
  }
}
