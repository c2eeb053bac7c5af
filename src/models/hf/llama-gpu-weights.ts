/**
 * The weights of a Llama-family model on the GPU: one buffer per tensor, matrices (embed_tokens,
 * the projections, lm_head) at the chosen storage — f16 halves packed two per u32 word, widened
 * in the shaders with unpack2x16float, or f32 — and the vectors (norm gains, biases) in f32
 * buffers, the kernels' compute type (holding f16-rounded values under f16 storage). A tensor is
 * uploaded as soon as it is read, so loading holds one tensor on the CPU at a time, never the
 * whole model.
 *
 * A matrix larger than one storage binding (maxStorageBufferBindingSize, or maxBufferSize where
 * smaller) is split by rows into parts that each fit, as the memory plan counts them: a
 * 151,936-token vocabulary's embedding is 272 MB as f16, over WebGPU's default 128 MiB binding.
 * Each part is a buffer of its own; the embedding gathers part by part and a projection multiplies
 * part by part, each part writing its own columns of the output (llama-gpu-ops.ts).
 *
 * Shapes as in llama-cpu-weights.ts (PyTorch's (out, in) for every projection).
 */
import type { GpuContext } from '../../gpu/context';
import { GpuLimitError } from '../../gpu/errors';
import { packF16, unpackF16 } from '../../ops/nn/unpack-f16';
import { checkInt } from '../../ops/validate';
import type { ModelSpec } from '../model-spec';
import { type CheckpointFiles, loadHfWeights } from './hf-checkpoint';
import { bindingPartLimit, rowsPerBindingPart } from './memory-plan';
import {
  checkLlamaSpec,
  type LlamaCpuModel,
  llamaTensorEntries,
  type TensorEntry,
} from './llama-cpu-weights';

/** How the matrices are kept on the GPU. */
export type GpuWeightStorage = 'f32' | 'f16';

/** Rows rowStart … rowStart + rows − 1 of a matrix, in a buffer of their own. */
export interface GpuMatrixPart {
  /** (rows, cols) values: f32, or f16 pairs in u32 words (rows·cols / 2; cols is even). */
  buffer: GPUBuffer;
  rowStart: number;
  rows: number;
}

export interface GpuMatrix {
  /** The matrix by rows: one part holding all of it, or several where it exceeds one binding. */
  parts: readonly GpuMatrixPart[];
  storage: GpuWeightStorage;
  rows: number;
  cols: number;
}

export interface GpuWeightOptions {
  /**
   * Most bytes one buffer of a matrix may hold (default, and at most: the device's binding limit);
   * a larger matrix is split by rows. Tests lower it to take the split path with a tiny model.
   */
  maxPartBytes?: number;
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
  readonly buffers: GPUBuffer[] = [];
  readonly vectors = new Map<string, GPUBuffer>();
  readonly matrices = new Map<string, GpuMatrix>();
  bytes = 0;
  overflowed = 0;
  private readonly partLimit: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly storage: GpuWeightStorage,
    options: GpuWeightOptions,
  ) {
    const deviceLimit = bindingPartLimit(gpu.summary.limits);
    const asked = options.maxPartBytes ?? deviceLimit;
    checkInt('llamaGpuWeights', 'maxPartBytes', asked, 4, Number.MAX_SAFE_INTEGER);
    this.partLimit = Math.min(asked, deviceLimit);
  }

  upload(name: string, shape: readonly number[], values: Float32Array): void {
    if (shape.length !== 2) {
      // Vectors (norm gains, biases) stay f32 buffers, the kernels' type, holding the f16 values
      // under f16 storage: an f16 model is every weight in f16, as a checkpoint saved in float16 is.
      const data = this.storage === 'f16' ? unpackF16(this.pack(values), values.length) : values;
      if (data.byteLength > this.partLimit) {
        throw new GpuLimitError(
          'maxStorageBufferBindingSize (bytes)',
          data.byteLength,
          this.partLimit,
          name,
        );
      }
      this.vectors.set(name, this.put(data, name));
      return;
    }
    const [rows, cols] = [shape[0]!, shape[1]!];
    // f16 rows are whole u32 words (cols is even in every Llama-family matrix; the kernels check).
    const data = this.storage === 'f16' ? this.pack(values) : values;
    const rowElements = data.length / rows;
    const rowsPerPart =
      data.byteLength <= this.partLimit
        ? rows
        : rowsPerBindingPart(name, rowElements * 4, this.partLimit);
    const parts: GpuMatrixPart[] = [];
    for (let rowStart = 0; rowStart < rows; rowStart += rowsPerPart) {
      const partRows = Math.min(rowsPerPart, rows - rowStart);
      const slice = data.subarray(rowStart * rowElements, (rowStart + partRows) * rowElements);
      const label =
        partRows === rows ? name : `${name} rows ${rowStart}…${rowStart + partRows - 1}`;
      parts.push({ buffer: this.put(slice, label), rowStart, rows: partRows });
    }
    this.matrices.set(name, { parts, storage: this.storage, rows, cols });
  }

  /** f16 pairs of `values`, counting values that overflowed to ±inf. */
  private pack(values: Float32Array): Uint32Array {
    const packed = packF16(values);
    this.overflowed += packed.overflowed;
    return packed.packed;
  }

  private put(data: Float32Array | Uint32Array, label: string): GPUBuffer {
    const buffer = this.gpu.upload(data, label);
    this.bytes += data.byteLength;
    this.buffers.push(buffer);
    return buffer;
  }

  release(): void {
    for (const buffer of this.buffers) this.gpu.pool.release(buffer);
    this.buffers.length = 0;
    this.vectors.clear();
    this.matrices.clear();
  }

  assemble(spec: ModelSpec): LlamaGpuWeights {
    const vector = (name: string) => this.vectors.get(name)!;
    const maybe = (name: string) => this.vectors.get(name);
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
  options: GpuWeightOptions = {},
): LlamaGpuWeights {
  const uploader = new TensorUploader(gpu, storage, options);
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
  options: GpuWeightOptions = {},
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
  return llamaGpuWeightsFromTensors(gpu, model.spec, (e) => byName.get(e.name)!, storage, options);
}

/**
 * Streams a checkpoint's tensors to the GPU (one tensor in CPU memory at a time), matrices over
 * one binding split by rows. Throws CheckpointError for a checkpoint that does not match the spec,
 * MemoryPlanError where one row of a matrix is over the binding, GpuLimitError for a vector over
 * it; nothing stays allocated after a failure.
 */
export async function loadLlamaGpuWeights(
  gpu: GpuContext,
  spec: ModelSpec,
  files: CheckpointFiles,
  options: GpuWeightOptions & {
    storage: GpuWeightStorage;
    onTensor?: (done: number, total: number) => void;
  },
): Promise<LlamaGpuWeights> {
  checkLlamaSpec(spec);
  const uploader = new TensorUploader(gpu, options.storage, options);
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
