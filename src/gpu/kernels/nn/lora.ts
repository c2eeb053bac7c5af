/**
 * A LoRA adapter on the GPU: the twin of src/ops/nn/lora.ts, composed of existing kernels only —
 * matmul.wgsl on the shapes of loraMatmulShapes(), and the scale s = alpha / r applied by
 * axpy.wgsl into a zeroed buffer (u = s·t + 0: one f32 rounding of s·t per element, as the CPU
 * twin's in-place scale). No new WGSL.
 *
 *   x: (rows, inDim)  A: (r, inDim)  B: (outDim, r)  y, dy: (rows, outDim)
 *   forward:  t = x·Aᵀ (rows, r) scratch;  u = s·t (rows, r), kept for the backward;  y += u·Bᵀ
 *   backward: t = dy·B;  du = s·t (rows, r);  dA = duᵀ·x;  dB = dyᵀ·u;  dx (+)= du·A
 *
 * u and du are whole GPUBuffers (they are zeroed with clearBuffer from offset 0); everything else
 * may be a slice (A and B are slices of the 'lora' group's flat buffer, dA and dB of its
 * gradient buffer). When s = 1 the matmul writes u directly and the scratch is not used.
 */
import { OpInputError } from '../../../ops/errors';
import {
  type LoraShape,
  checkLoraBackwardInput,
  checkLoraForwardInput,
  checkLoraShape,
  loraMatmulShapes,
} from '../../../ops/nn/lora';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { PooledBuffers } from '../run-convenience';
import { encodeAxpy } from './axpy';
import { encodeMatmul } from './matmul';

function checkEncode(op: string, shape: LoraShape, scale: number, scaled: GPUBuffer): void {
  checkLoraShape(shape, op);
  if (!Number.isFinite(scale)) throw new OpInputError(op, 'scale', `must be finite, got ${scale}`);
  const bytes = shape.rows * shape.rank * 4;
  if (scaled.size < bytes) {
    throw new OpInputError(
      op,
      'buffers.u',
      `must hold rows × rank = ${shape.rows * shape.rank} f32 (${bytes} bytes), got ${scaled.size}`,
    );
  }
}

/**
 * out (rows, r) = s·(P·Q) for one of the two rank-sized products: through the scratch `t` and an
 * axpy into the zeroed `out`, or straight into `out` when s = 1.
 */
async function scaledProduct(
  gpu: GpuContext,
  batch: CommandBatch,
  p: BufferRef,
  q: BufferRef,
  out: GPUBuffer,
  t: BufferRef,
  shape: Parameters<typeof encodeMatmul>[3],
  scale: number,
): Promise<void> {
  if (scale === 1) {
    await encodeMatmul(gpu, batch, { a: p, b: q, out }, shape);
    return;
  }
  await encodeMatmul(gpu, batch, { a: p, b: q, out: t }, shape);
  const count = shape.m * shape.n;
  batch.clear(out, count * 4);
  await encodeAxpy(gpu, batch, { x: t, y: out }, count, scale);
}

/**
 * Records y += s·(x·Aᵀ)·Bᵀ in place and u = s·x·Aᵀ. t: (rows, r) scratch, apart from u; y in
 * another GPUBuffer than x, A, B and u.
 */
export async function encodeLoraForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; a: BufferRef; b: BufferRef; y: BufferRef; u: GPUBuffer; t: BufferRef },
  shape: LoraShape,
  scale: number,
): Promise<void> {
  checkEncode('loraForward', shape, scale, buffers.u);
  const shapes = loraMatmulShapes(shape);
  const { x, a, b, y, u, t } = buffers;
  await scaledProduct(gpu, batch, x, a, u, t, shapes.down, scale);
  await encodeMatmul(gpu, batch, { a: u, b, out: y }, shapes.up, { accumulate: true });
}

export interface LoraBackwardGpuOptions {
  /** dx += du·A (the frozen layer's dx already there); otherwise dx = du·A. */
  accumulateDx?: boolean;
  /** dA += …, dB += … (gradient accumulation over micro-batches); otherwise overwritten. */
  accumulateGrads?: boolean;
}

/**
 * Records dA (r, inDim), dB (outDim, r) and the adapter's share of dx (rows, inDim) from dy, x
 * and the forward's u. du: (rows, r) written (s·dy·B); t: (rows, r) scratch apart from du.
 */
export async function encodeLoraBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    dy: BufferRef;
    x: BufferRef;
    u: BufferRef;
    a: BufferRef;
    b: BufferRef;
    dA: BufferRef;
    dB: BufferRef;
    dx: BufferRef;
    du: GPUBuffer;
    t: BufferRef;
  },
  shape: LoraShape,
  scale: number,
  options: LoraBackwardGpuOptions = {},
): Promise<void> {
  checkEncode('loraBackward', shape, scale, buffers.du);
  const shapes = loraMatmulShapes(shape);
  const { dy, x, u, a, b, dA, dB, dx, du, t } = buffers;
  const grads = { accumulate: Boolean(options.accumulateGrads) };
  await scaledProduct(gpu, batch, dy, b, du, t, shapes.du, scale);
  await encodeMatmul(gpu, batch, { a: du, b: x, out: dA }, shapes.dA, grads);
  await encodeMatmul(gpu, batch, { a: dy, b: u, out: dB }, shapes.dB, grads);
  await encodeMatmul(gpu, batch, { a: du, b: a, out: dx }, shapes.dx, {
    accumulate: Boolean(options.accumulateDx),
  });
}

/** Convenience path of loraForward(): same checks and results (out, u), one sync point. */
export async function loraForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  a: Float32Array,
  b: Float32Array,
  y: Float32Array,
  shape: LoraShape,
  scale: number,
): Promise<{ out: Float32Array; u: Float32Array }> {
  checkLoraForwardInput(x, a, b, y, shape, scale);
  const pooled = new PooledBuffers(gpu);
  const small = shape.rows * shape.rank;
  try {
    const buffers = {
      x: pooled.upload(x, 'lora x'),
      a: pooled.upload(a, 'lora A'),
      b: pooled.upload(b, 'lora B'),
      y: pooled.upload(y, 'lora y'),
      u: pooled.storage(small, 'lora u'),
      t: pooled.storage(small, 'lora scratch'),
    };
    const batch = gpu.beginBatch('loraForward');
    await encodeLoraForward(gpu, batch, buffers, shape, scale);
    batch.submit();
    return {
      out: await gpu.readF32(buffers.y, y.length),
      u: await gpu.readF32(buffers.u, small),
    };
  } finally {
    pooled.release();
  }
}

/** Convenience path of loraBackward(): same checks and results (dx, dA, dB), one sync point. */
export async function loraBackwardGpu(
  gpu: GpuContext,
  dy: Float32Array,
  x: Float32Array,
  u: Float32Array,
  a: Float32Array,
  b: Float32Array,
  shape: LoraShape,
  scale: number,
  options: { accumulateDx?: Float32Array } = {},
): Promise<{ dx: Float32Array; dA: Float32Array; dB: Float32Array }> {
  checkLoraBackwardInput(dy, x, u, a, b, shape, scale, options.accumulateDx);
  const { rows, inDim, outDim, rank } = shape;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dy: pooled.upload(dy, 'lora dy'),
      x: pooled.upload(x, 'lora x'),
      u: pooled.upload(u, 'lora u'),
      a: pooled.upload(a, 'lora A'),
      b: pooled.upload(b, 'lora B'),
      dA: pooled.storage(rank * inDim, 'lora dA'),
      dB: pooled.storage(outDim * rank, 'lora dB'),
      dx: options.accumulateDx
        ? pooled.upload(options.accumulateDx, 'lora dx')
        : pooled.storage(rows * inDim, 'lora dx'),
      du: pooled.storage(rows * rank, 'lora du'),
      t: pooled.storage(rows * rank, 'lora scratch'),
    };
    const batch = gpu.beginBatch('loraBackward');
    await encodeLoraBackward(gpu, batch, buffers, shape, scale, {
      accumulateDx: Boolean(options.accumulateDx),
    });
    batch.submit();
    return {
      dx: await gpu.readF32(buffers.dx, rows * inDim),
      dA: await gpu.readF32(buffers.dA, rank * inDim),
      dB: await gpu.readF32(buffers.dB, outDim * rank),
    };
  } finally {
    pooled.release();
  }
}
