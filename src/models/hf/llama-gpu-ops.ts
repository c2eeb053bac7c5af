/**
 * The few calls the Llama GPU forward, generator and backward make that depend on how a weight is
 * stored or on the rotary table's upload: one place that picks the f32 or f16 linear kernel, so the model's
 * composition (llama-gpu.ts, llama-gpu-generate.ts) reads the same for both storages.
 */
import type { BufferRef, CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { encodeGqaAttentionForward, type GqaGpuShape } from '../../gpu/kernels/nn/attention-gqa';
import { encodeLinearForward } from '../../gpu/kernels/nn/linear';
import {
  encodeLinearF16BackwardInput,
  encodeLinearF16Forward,
} from '../../gpu/kernels/nn/linear-f16';
import { encodeMatmul } from '../../gpu/kernels/nn/matmul';
import { linearMatmulShapes } from '../../ops/nn/linear';
import { encodeLoraForward } from '../../gpu/kernels/nn/lora';
import { rotaryTableF32 } from '../../gpu/kernels/nn/rotary';
import { encodeRotaryHeads } from '../../gpu/kernels/nn/rotary-heads';
import type { RotaryTable } from '../../ops/nn/rotary';
import type { BlockLoraGpu } from './llama-gpu-lora';
import type { GpuLinearWeights } from './llama-gpu-weights';
import type { LoraModule } from './llama-lora';

/** A rotary cos/sin table on the GPU: (positions, hs/2) f32 each. */
export interface GpuRotaryTable {
  cos: GPUBuffer;
  sin: GPUBuffer;
  positions: number;
  release(): void;
}

export function uploadRotaryTable(gpu: GpuContext, table: RotaryTable): GpuRotaryTable {
  const { cos, sin } = rotaryTableF32(table);
  const cosBuffer = gpu.upload(cos, 'rotary cos');
  const sinBuffer = gpu.upload(sin, 'rotary sin');
  return {
    cos: cosBuffer,
    sin: sinBuffer,
    positions: table.positions,
    release: () => {
      gpu.pool.release(cosBuffer);
      gpu.pool.release(sinBuffer);
    },
  };
}

/**
 * Records y (rows, out) = x (rows, in)·Wᵀ (+ b) with W in its storage dtype, then, when `lora`
 * holds an adapter for `lora.module`, y += (alpha/r)·(x·Aᵀ)·Bᵀ, its u (rows, r) written to
 * `lora.u` when given (kept for a backward), else to the scratch's (overwritten).
 */
export async function recordLinear(
  gpu: GpuContext,
  batch: CommandBatch,
  linear: GpuLinearWeights,
  x: BufferRef,
  y: BufferRef,
  rows: number,
  lora?: { block: BlockLoraGpu | undefined; module: LoraModule; u?: GPUBuffer },
): Promise<void> {
  const shape = { rows, inDim: linear.w.cols, outDim: linear.w.rows };
  const buffers = { x, w: linear.w.buffer, y, ...(linear.b ? { b: linear.b } : {}) };
  if (linear.w.storage === 'f16') await encodeLinearF16Forward(gpu, batch, buffers, shape);
  else await encodeLinearForward(gpu, batch, buffers, shape);
  const adapter = lora?.block?.layer[lora.module];
  if (!lora?.block || !adapter) return;
  const { rank, scale, scratch } = lora.block;
  await encodeLoraForward(
    gpu,
    batch,
    { x, a: adapter.a, b: adapter.b, y, u: lora.u ?? scratch.u, t: scratch.t },
    { ...shape, rank },
    scale,
  );
}

/**
 * Records dx (rows, in) = dy (rows, out)·W for a frozen W in its storage dtype (no dW: the base
 * does not train), or dx += … with `accumulate` (another projection's share of the same input).
 */
export async function recordLinearInputGrad(
  gpu: GpuContext,
  batch: CommandBatch,
  linear: GpuLinearWeights,
  dy: BufferRef,
  dx: BufferRef,
  rows: number,
  accumulate: boolean,
): Promise<void> {
  const shape = { rows, inDim: linear.w.cols, outDim: linear.w.rows };
  if (linear.w.storage === 'f16') {
    const buffers = { dy, w: linear.w.buffer, dx };
    await encodeLinearF16BackwardInput(gpu, batch, buffers, shape, { accumulate });
  } else {
    const buffers = { a: dy, b: linear.w.buffer, out: dx };
    await encodeMatmul(gpu, batch, buffers, linearMatmulShapes(shape).dx, { accumulate });
  }
}

/** Records out = x rotated to each row's position (rows, heads·hs); out apart from x. */
export async function recordRotary(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; out: BufferRef; positions: BufferRef; table: GpuRotaryTable },
  rows: number,
  heads: number,
  headSize: number,
): Promise<void> {
  const { x, out, positions, table } = buffers;
  await encodeRotaryHeads(
    gpu,
    batch,
    { x, out, positions, cos: table.cos, sin: table.sin },
    { rows, heads, headSize, tablePositions: table.positions },
  );
}

/** Records causal GQA attention; probs only when a backward will read them. */
export async function recordAttention(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { q: BufferRef; k: BufferRef; v: BufferRef; out: BufferRef; probs?: BufferRef },
  shape: GqaGpuShape,
): Promise<void> {
  await encodeGqaAttentionForward(gpu, batch, buffers, shape);
}
