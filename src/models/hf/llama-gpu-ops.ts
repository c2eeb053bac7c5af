/**
 * The few calls the Llama GPU forward, generator and backward make that depend on how a weight is
 * stored or on the rotary table's upload: one place that picks the f32 or f16 linear kernel, so the model's
 * composition (llama-gpu.ts, llama-gpu-generate.ts) reads the same for both storages.
 */
import type { BufferRef, CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import {
  encodeGqaAttentionForward,
  type GqaForwardBuffers,
  type GqaGpuShape,
} from '../../gpu/kernels/nn/attention-gqa';
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
import type { GpuLinearWeights, GpuMatrix, GpuMatrixPart } from './llama-gpu-weights';
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
 * The part's shape, and the window of the full (rows, W rows) output it covers: none when W is
 * one part, else the part's columns (W split by rows, e.g. a large vocabulary's LM head).
 */
function partShape(w: GpuMatrix, part: GpuMatrixPart, rows: number) {
  const shape = { rows, inDim: w.cols, outDim: part.rows };
  const window = w.parts.length > 1 ? { stride: w.rows, col: part.rowStart } : undefined;
  return { shape, window };
}

/**
 * Records y (rows, out) = x (rows, in)·Wᵀ (+ b) with W in its storage dtype, part by part where
 * W is split by rows (each part writes its own columns of y), then, when `lora` holds an adapter
 * for `lora.module`, y += (alpha/r)·(x·Aᵀ)·Bᵀ, its u (rows, r) written to `lora.u` when given
 * (kept for a backward), else to the scratch's (overwritten).
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
  for (const part of linear.w.parts) {
    const { shape, window } = partShape(linear.w, part, rows);
    const buffers = { x, w: part.buffer, y, ...(linear.b ? { b: linear.b } : {}) };
    const options = window ? { yWindow: window } : {};
    if (linear.w.storage === 'f16')
      await encodeLinearF16Forward(gpu, batch, buffers, shape, options);
    else await encodeLinearForward(gpu, batch, buffers, shape, options);
  }
  const shape = { rows, inDim: linear.w.cols, outDim: linear.w.rows };
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
 * A W split by rows adds up its parts: dx (+)= Σ_parts dy[:, part's columns]·W_part.
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
  for (const [i, part] of linear.w.parts.entries()) {
    const { shape, window } = partShape(linear.w, part, rows);
    const add = accumulate || i > 0;
    if (linear.w.storage === 'f16') {
      const buffers = { dy, w: part.buffer, dx };
      const options = { accumulate: add, ...(window ? { dyWindow: window } : {}) };
      await encodeLinearF16BackwardInput(gpu, batch, buffers, shape, options);
    } else {
      const buffers = { a: dy, b: part.buffer, out: dx };
      const options = { accumulate: add, ...(window ? { aWindow: window } : {}) };
      await encodeMatmul(gpu, batch, buffers, linearMatmulShapes(shape).dx, options);
    }
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
  buffers: GqaForwardBuffers,
  shape: GqaGpuShape,
): Promise<void> {
  await encodeGqaAttentionForward(gpu, batch, buffers, shape);
}
