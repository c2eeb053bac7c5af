/**
 * The weights of a Llama-family model on the GPU: one buffer per tensor, matrices (embed_tokens,
 * the projections, lm_head) at the chosen storage — f16 halves packed two per u32 word, widened
 * in the shaders with unpack2x16float, or f32 — and the vectors (norm gains, biases) in f32
 * buffers, the kernels' compute type (holding f16-rounded values under f16 storage). A tensor is uploaded as soon as it is read, so loading holds one tensor
 * on the CPU at a time, never the whole model.
 *
 * Shapes as in llama-cpu-weights.ts (PyTorch's (out, in) for every projection).
 */
import type { GpuContext } from '../../gpu/context';
import { GpuLimitError } from '../../gpu/errors';
import { packF16, unpackF16 } from '../../ops/nn/unpack-f16';
import type { ModelSpec } from '../model-spec';
import { type CheckpointFiles, loadHfWeights } from './hf-checkpoint';
import {
  checkLlamaSpec,
  type LlamaCpuModel,
  llamaTensorEntries,
  type TensorEntry,
} from './llama-cpu-weights';

/** How the matrices are kept on the GPU. */
export type GpuWeightStorage = 'f32' | 'f16';

export interface GpuMatrix {
  /** (rows, cols) values: f32, or f16 pairs in u32 words (⌈rows·cols / 2⌉). */
  buffer: GPUBuffer;
  storage: GpuWeightStorage;
  rows: number;
  cols: number;
}

/** A projection y = x·Wᵀ (+ b): W (out, in) = (rows, cols), b (out) f32 when the layer has one. */
export interface GpuLinearWeights {
  w: GpuMatrix;
  b: GPUBuffer | undefined;
}

export interface LlamaGpuLayer {
  inputNorm: GPUBuffer;
  q: GpuLinearWeights;
  k: GpuLinearWeights;
  v: GpuLinearWeights;
  qNorm: GPUBuffer | undefined;
  kNorm: GPUBuffer | undefined;
  o: GpuLinearWeights;
  postNorm: GPUBuffer;
  gate: GpuLinearWeights;
  up: GpuLinearWeights;
  down: GpuLinearWeights;
}

export interface LlamaGpuWeights {
  spec: ModelSpec;
  storage: GpuWeightStorage;
  /** embed_tokens: (V, C). */
  embed: GpuMatrix;
  layers: LlamaGpuLayer[];
  norm: GPUBuffer;
  /** lm_head: (V, C); the embedding's matrix itself when tied. */
  lmHead: GpuLinearWeights;
  /** Bytes of every weight buffer. */
  bytes: number;
  /** Finite f32 values that became ±inf in f16 (0 for f32 storage). */
  overflowed: number;
  /** Returns every buffer to the pool. */
  release(): void;
}

/** Collects uploaded tensors by name; knows which are matrices. */
class TensorUploader {
  readonly buffers = new Map<string, GPUBuffer>();
  readonly matrices = new Map<string, GpuMatrix>();
  bytes = 0;
  overflowed = 0;

  constructor(
    private readonly gpu: GpuContext,
    private readonly storage: GpuWeightStorage,
  ) {}

  upload(name: string, shape: readonly number[], values: Float32Array): void {
    const isMatrix = shape.length === 2;
    let data: Float32Array | Uint32Array = values;
    if (this.storage === 'f16') {
      const packed = packF16(values);
      this.overflowed += packed.overflowed;
      // Vectors (norm gains, biases) stay f32 buffers, the kernels' type, holding the f16 values:
      // an f16 model is every weight in f16, as a checkpoint saved in float16 is.
      data = isMatrix ? packed.packed : unpackF16(packed.packed, values.length);
    }
    const max = this.gpu.summary.limits.maxStorageBufferBindingSize;
    if (data.byteLength > max) {
      throw new GpuLimitError('maxStorageBufferBindingSize (bytes)', data.byteLength, max, name);
    }
    const buffer = this.gpu.upload(data, name);
    this.bytes += data.byteLength;
    this.buffers.set(name, buffer);
    if (isMatrix) {
      this.matrices.set(name, {
        buffer,
        storage: this.storage,
        rows: shape[0]!,
        cols: shape[1]!,
      });
    }
  }

  release(): void {
    for (const buffer of this.buffers.values()) this.gpu.pool.release(buffer);
    this.buffers.clear();
    this.matrices.clear();
  }

  assemble(spec: ModelSpec): LlamaGpuWeights {
    const vector = (name: string) => this.buffers.get(name)!;
    const maybe = (name: string) => this.buffers.get(name);
    const linear = (name: string): GpuLinearWeights => ({
      w: this.matrices.get(`${name}.weight`)!,
      b: maybe(`${name}.bias`),
    });
    const layers: LlamaGpuLayer[] = [];
    for (let n = 0; n < spec.layers; n++) {
      const p = `model.layers.${n}.`;
      layers.push({
        inputNorm: vector(`${p}input_layernorm.weight`),
        q: linear(`${p}self_attn.q_proj`),
        k: linear(`${p}self_attn.k_proj`),
        v: linear(`${p}self_attn.v_proj`),
        qNorm: maybe(`${p}self_attn.q_norm.weight`),
        kNorm: maybe(`${p}self_attn.k_norm.weight`),
        o: linear(`${p}self_attn.o_proj`),
        postNorm: vector(`${p}post_attention_layernorm.weight`),
        gate: linear(`${p}mlp.gate_proj`),
        up: linear(`${p}mlp.up_proj`),
        down: linear(`${p}mlp.down_proj`),
      });
    }
    const embed = this.matrices.get('model.embed_tokens.weight')!;
    return {
      spec,
      storage: this.storage,
      embed,
      layers,
      norm: vector('model.norm.weight'),
      lmHead: spec.tiedEmbeddings ? { w: embed, b: undefined } : linear('lm_head'),
      bytes: this.bytes,
      overflowed: this.overflowed,
      release: () => this.release(),
    };
  }
}

/**
 * Uploads the model of `spec` from `tensor`, called once per tensor in file order with its
 * Hugging Face name and shape (e.g. seeded random weights at a real model's shapes, made one
 * tensor at a time); nothing stays allocated after a failure.
 */
export function llamaGpuWeightsFromTensors(
  gpu: GpuContext,
  spec: ModelSpec,
  tensor: (entry: TensorEntry) => Float32Array,
  storage: GpuWeightStorage,
): LlamaGpuWeights {
  const uploader = new TensorUploader(gpu, storage);
  try {
    for (const entry of llamaTensorEntries(spec))
      uploader.upload(entry.name, entry.shape, tensor(entry));
  } catch (error) {
    uploader.release();
    throw error;
  }
  return uploader.assemble(spec);
}

/** Uploads a CPU model's f32 weights (tests, models built in the tab). */
export function llamaGpuWeightsFromCpu(
  gpu: GpuContext,
  model: LlamaCpuModel<Float32Array>,
  storage: GpuWeightStorage,
): LlamaGpuWeights {
  const byName = new Map<string, Float32Array>();
  byName.set('model.embed_tokens.weight', model.embed);
  model.layers.forEach((layer, n) => {
    const p = `model.layers.${n}.`;
    const put = (name: string, value: Float32Array | undefined) => {
      if (value) byName.set(`${p}${name}`, value);
    };
    put('input_layernorm.weight', layer.inputNorm);
    put('self_attn.q_proj.weight', layer.q);
    put('self_attn.q_proj.bias', layer.qBias);
    put('self_attn.k_proj.weight', layer.k);
    put('self_attn.k_proj.bias', layer.kBias);
    put('self_attn.v_proj.weight', layer.v);
    put('self_attn.v_proj.bias', layer.vBias);
    put('self_attn.q_norm.weight', layer.qNorm);
    put('self_attn.k_norm.weight', layer.kNorm);
    put('self_attn.o_proj.weight', layer.o);
    put('self_attn.o_proj.bias', layer.oBias);
    put('post_attention_layernorm.weight', layer.postNorm);
    put('mlp.gate_proj.weight', layer.gate);
    put('mlp.gate_proj.bias', layer.gateBias);
    put('mlp.up_proj.weight', layer.up);
    put('mlp.up_proj.bias', layer.upBias);
    put('mlp.down_proj.weight', layer.down);
    put('mlp.down_proj.bias', layer.downBias);
  });
  byName.set('model.norm.weight', model.norm);
  if (!model.spec.tiedEmbeddings) byName.set('lm_head.weight', model.lmHead);
  return llamaGpuWeightsFromTensors(gpu, model.spec, (e) => byName.get(e.name)!, storage);
}

/**
 * Streams a checkpoint's tensors to the GPU (one tensor in CPU memory at a time). Throws
 * CheckpointError for a checkpoint that does not match the spec, GpuLimitError for a tensor over
 * the device's binding size; nothing stays allocated after a failure.
 */
export async function loadLlamaGpuWeights(
  gpu: GpuContext,
  spec: ModelSpec,
  files: CheckpointFiles,
  options: { storage: GpuWeightStorage; onTensor?: (done: number, total: number) => void },
): Promise<LlamaGpuWeights> {
  checkLlamaSpec(spec);
  const uploader = new TensorUploader(gpu, options.storage);
  try {
    await loadHfWeights(spec, files, {
      f32: true,
      onTensorData: (entry, values) => uploader.upload(entry.name, entry.shape, values.f32!),
      ...(options.onTensor ? { onTensor: options.onTensor } : {}),
    });
  } catch (error) {
    uploader.release();
    throw error;
  }
  return uploader.assemble(spec);
}
