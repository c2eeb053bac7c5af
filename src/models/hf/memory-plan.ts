/**
 * The memory a model needs, stated before any weight is read, and how its tensors fit the
 * adapter's buffer limits. WebGPU caps one buffer (maxBufferSize; 256 MiB by default) and one
 * storage binding (maxStorageBufferBindingSize; 128 MiB by default); a 151,936 × 896 embedding is
 * 545 MB in f32, so the largest tensors are split by rows into parts that each fit a binding, and
 * the weights are packed into as many buffers as the buffer limit needs.
 *
 * Counted (bytes): weights at the storage dtype (2 for f16/bf16, 4 for f32), each tensor or part
 * starting on a 256-byte boundary (minStorageBufferOffsetAlignment); the KV cache, K and V per
 * layer for batch × context positions of NKV·hs values; activations of a forward pass with
 * buffers reused across layers, the larger of scoring (B sequences of T tokens at once) and one
 * decode step of the whole batch. No memory query exists in WebGPU, so the caller states the
 * budget (what the user's device is known or assumed to have), and a model over it is refused.
 */
import type { ModelSpec, StorageDtype } from '../model-spec';
import { parameterCount } from '../model-spec';
import { hfParamSpecs } from './hf-weights';

export interface BufferLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
}

/** WebGPU's default limits, what a device gets unless it asks for the adapter's own. */
export const WEBGPU_DEFAULT_LIMITS: BufferLimits = {
  maxBufferSize: 268_435_456,
  maxStorageBufferBindingSize: 134_217_728,
};

/** Where each tensor or part starts in a buffer (bytes). */
const ALIGNMENT = 256;

export interface MemoryRequest {
  storage: StorageDtype;
  /** Sequences generated at once. */
  batch: number;
  /** Positions held per sequence in the KV cache (prompt + completion); ≤ spec.context. */
  context: number;
  /** The KV cache's dtype (default 'f32'). */
  kvDtype?: 'f32' | 'f16';
  /** Sequences scored at once (default: batch) and tokens each (default: context). */
  scoreBatch?: number;
  scoreTokens?: number;
  limits: BufferLimits;
  /** Refuse a plan over this many bytes (the device's memory, as far as it is known). */
  budgetBytes?: number;
}

export interface TensorSplit {
  name: string;
  bytes: number;
  parts: number;
  rowsPerPart: number;
}

export interface MemoryPlan {
  /** Parameters × bytes per value: the weights without alignment padding. */
  parameterBytes: number;
  /** The weight buffers' total size, alignment padding included. */
  weightBytes: number;
  /** Buffers the weights are packed into (each ≤ maxBufferSize). */
  weightBuffers: number;
  /** Tensors larger than one binding, split by rows. */
  splits: TensorSplit[];
  kvCacheBytes: number;
  /** One layer's K (or V) cache: what one binding must hold. */
  kvLayerBytes: number;
  activationBytes: number;
  totalBytes: number;
}

/** A model that will not fit: the message carries the numbers. */
export class MemoryPlanError extends Error {
  override readonly name = 'MemoryPlanError';
  constructor(
    message: string,
    readonly plan?: MemoryPlan,
  ) {
    super(message);
  }
}

const BYTES: Record<StorageDtype, number> = { f32: 4, f16: 2, bf16: 2 };

/** Bytes as people read them: "545 MB", "1.19 GB". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${(bytes / 1e9).toFixed(2)} GB`;
  if (bytes >= 1e6) return `${(bytes / 1e6).toFixed(bytes >= 1e8 ? 0 : 1)} MB`;
  return `${(bytes / 1e3).toFixed(1)} kB`;
}

const align = (n: number) => Math.ceil(n / ALIGNMENT) * ALIGNMENT;

function checkRequest(spec: ModelSpec, request: MemoryRequest): void {
  const positive = (name: string, value: number, max: number) => {
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new MemoryPlanError(
        `memory plan: ${name} must be an integer in [1, ${max}], got ${value}`,
      );
    }
  };
  positive('batch', request.batch, 4096);
  positive('context', request.context, spec.context);
  positive('scoreBatch', request.scoreBatch ?? request.batch, 4096);
  positive('scoreTokens', request.scoreTokens ?? request.context, spec.context);
  const { maxBufferSize, maxStorageBufferBindingSize } = request.limits;
  if (!(maxStorageBufferBindingSize >= ALIGNMENT && maxBufferSize >= ALIGNMENT)) {
    throw new MemoryPlanError('memory plan: limits must be at least 256 bytes each');
  }
}

/** The most bytes one part of a split tensor may take: one binding, within one buffer. */
export function bindingPartLimit(limits: BufferLimits): number {
  return Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
}

/**
 * Rows of a tensor per part when it is split to fit `partLimit` bytes per binding (the plan and
 * the GPU loader split alike). f16 is read as u32 pairs (unpack2x16float), so a part must be a
 * whole number of words. Throws MemoryPlanError where one row alone is over the limit.
 */
export function rowsPerBindingPart(name: string, rowBytes: number, partLimit: number): number {
  let rowsPerPart = Math.floor(partLimit / rowBytes);
  if (rowBytes % 4 !== 0 && rowsPerPart % 2 === 1 && rowsPerPart > 1) rowsPerPart--;
  if (rowsPerPart === 0) {
    throw new MemoryPlanError(
      `memory plan: one row of ${name} is ${formatBytes(rowBytes)}, more than the ${formatBytes(partLimit)} a binding may hold`,
    );
  }
  return rowsPerPart;
}

/** The plan for `spec` under `request`; throws MemoryPlanError, with the numbers, if it cannot fit. */
export function planMemory(spec: ModelSpec, request: MemoryRequest): MemoryPlan {
  checkRequest(spec, request);
  const bytesPer = BYTES[request.storage];
  const partLimit = bindingPartLimit(request.limits);
  // Weights: each tensor (or each part of a split one) aligned, packed first-fit into buffers.
  const splits: TensorSplit[] = [];
  const pieces: number[] = [];
  for (const tensor of hfParamSpecs(spec)) {
    const size = tensor.shape.reduce((a, b) => a * b, 1);
    const bytes = size * bytesPer;
    if (bytes <= partLimit) {
      pieces.push(align(bytes));
      continue;
    }
    const rows = tensor.shape[0]!;
    const rowBytes = bytes / rows;
    const rowsPerPart = rowsPerBindingPart(tensor.name, rowBytes, partLimit);
    const parts = Math.ceil(rows / rowsPerPart);
    splits.push({ name: tensor.name, bytes, parts, rowsPerPart });
    for (let p = 0; p < parts; p++) {
      pieces.push(align(Math.min(rowsPerPart, rows - p * rowsPerPart) * rowBytes));
    }
  }
  const buffers: number[] = [];
  for (const piece of pieces) {
    const last = buffers.length - 1;
    if (last >= 0 && buffers[last]! + piece <= request.limits.maxBufferSize)
      buffers[last]! += piece;
    else buffers.push(piece);
  }
  const weightBytes = buffers.reduce((a, b) => a + b, 0);

  // KV cache: K and V for every layer, batch × context positions of NKV·hs values.
  const kvBytes = request.kvDtype === 'f16' ? 2 : 4;
  const kvLayerBytes = request.batch * request.context * spec.kvHeads * spec.headDim * kvBytes;
  const kvCacheBytes = 2 * spec.layers * kvLayerBytes;
  if (kvLayerBytes > partLimit) {
    throw new MemoryPlanError(
      `memory plan: one layer's K cache for batch ${request.batch} × context ${request.context} is ${formatBytes(kvLayerBytes)}, more than the ${formatBytes(partLimit)} a binding may hold; lower the batch or the context`,
    );
  }
  const scoring = forwardActivationBytes(
    spec,
    request.scoreBatch ?? request.batch,
    request.scoreTokens ?? request.context,
    request.scoreTokens ?? request.context,
  );
  const decoding = forwardActivationBytes(spec, request.batch, 1, request.context);
  const activationBytes = Math.max(scoring, decoding);
  const plan: MemoryPlan = {
    parameterBytes: parameterCount(spec) * bytesPer,
    weightBytes,
    weightBuffers: buffers.length,
    splits,
    kvCacheBytes,
    kvLayerBytes,
    activationBytes,
    totalBytes: weightBytes + kvCacheBytes + activationBytes,
  };
  if (request.budgetBytes !== undefined && plan.totalBytes > request.budgetBytes) {
    throw new MemoryPlanError(
      `the model needs ${formatBytes(plan.totalBytes)} (weights ${formatBytes(weightBytes)} as ${request.storage}, KV cache ${formatBytes(kvCacheBytes)} for batch ${request.batch} × context ${request.context}, activations ${formatBytes(activationBytes)}), more than the ${formatBytes(request.budgetBytes)} available`,
      plan,
    );
  }
  return plan;
}

/**
 * f32 activations of one forward pass over B sequences of T new tokens attending to S positions,
 * buffers reused layer to layer: residual and its normed copy [N, C] (N = B·T), q [N, NH·hs],
 * k and v [N, NKV·hs], attention scores [B, NH, T, S], attention output [N, NH·hs], gate and up
 * [N, F], logits [N, V] and per-token log-probs [N].
 */
export function forwardActivationBytes(spec: ModelSpec, B: number, T: number, S: number): number {
  const N = B * T;
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F, vocab: V } = spec;
  const floats =
    2 * N * C +
    N * NH * hs +
    2 * N * NKV * hs +
    B * NH * T * S +
    N * NH * hs +
    2 * N * F +
    N * V +
    N;
  return 4 * floats;
}
