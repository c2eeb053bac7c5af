/**
 * GPU wrapper for kernels/nn/rotary.wgsl (rotary position embeddings, in place on qkv); CPU twin:
 * src/ops/nn/rotary.ts. Dispatch: one invocation per (row, head, frequency), B·T·NH·hs/2 in all,
 * ceil(count / 256) workgroups over (x, y); each reads and writes its two q and two k elements
 * once and reads one cos and one sin.
 *
 * The cos/sin table is uploaded once per model (rotaryTableF32: the float64 table rounded to f32)
 * and read by every layer. qkv is the only writable binding, so it must live in another buffer
 * than the tables (WebGPU rejects a buffer bound writable and read-only in one dispatch).
 */
import rotarySource from '../../../../kernels/nn/rotary.wgsl?raw';
import {
  checkRotaryInput,
  checkRotaryShape,
  type RotaryShape,
  type RotaryTable,
} from '../../../ops/nn/rotary';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { checkRefElements } from './add';

const THREADS = 256;

export const rotaryKernel = defineKernel({
  name: 'rotary',
  source: rotarySource,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'seq', type: 'u32' },
    { name: 'heads', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'half', type: 'u32' },
    { name: 'pos_offset', type: 'u32' },
    { name: 'direction', type: 'f32' },
  ],
  storage: [
    { name: 'qkv', access: 'read_write' },
    { name: 'cos_table', access: 'read' },
    { name: 'sin_table', access: 'read' },
  ],
});

/** The upload form of a table: cos and sin rounded to f32, (positions, half) each. */
export function rotaryTableF32(table: RotaryTable): { cos: Float32Array; sin: Float32Array } {
  return { cos: Float32Array.from(table.cos), sin: Float32Array.from(table.sin) };
}

/**
 * Records the rotation of q and k in qkv (B·T, 3C), in place: forward, or with `inverse` the
 * backward (rotation by −angle, applied to dqkv). cos, sin: (positions, half) f32 from
 * rotaryTableF32. Row b·T + t is at position posOffset + t.
 */
export async function encodeRotary(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { qkv: BufferRef; cos: BufferRef; sin: BufferRef },
  shape: RotaryShape & { half: number; positions: number },
  options: { posOffset?: number; inverse?: boolean } = {},
): Promise<void> {
  const op = options.inverse ? 'rotaryBackward' : 'rotaryForward';
  const posOffset = options.posOffset ?? 0;
  const { half, positions } = shape;
  const elements = checkRotaryShape(op, shape, half, positions, posOffset);
  checkBindingSize(gpu, Math.max(elements, positions * half), `${op} tensors`);
  checkRefElements(op, 'qkv', buffers.qkv, elements);
  checkRefElements(op, 'cos', buffers.cos, positions * half);
  checkRefElements(op, 'sin', buffers.sin, positions * half);
  const count = shape.batch * shape.seq * shape.heads * half;
  const pipeline = await gpu.pipelines.get(rotaryKernel, { WORKGROUP_SIZE: THREADS });
  batch.dispatch(rotaryKernel, {
    pipeline,
    buffers: { qkv: buffers.qkv, cos_table: buffers.cos, sin_table: buffers.sin },
    uniforms: {
      count,
      seq: shape.seq,
      heads: shape.heads,
      channels: shape.channels,
      half,
      pos_offset: posOffset,
      direction: options.inverse ? -1 : 1,
    },
    workgroups: invocationGrid(gpu, count, THREADS),
  });
}

/** Convenience path of rotaryForward(): same checks, upload, run, read back (one sync point). */
export function rotaryForwardGpu(
  gpu: GpuContext,
  qkv: Float32Array,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset = 0,
): Promise<Float32Array> {
  return runRotary(gpu, 'rotaryForward', qkv, table, shape, posOffset, false);
}

/** Convenience path of rotaryBackward(): same checks, upload, run, read back (one sync point). */
export function rotaryBackwardGpu(
  gpu: GpuContext,
  dqkv: Float32Array,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset = 0,
): Promise<Float32Array> {
  return runRotary(gpu, 'rotaryBackward', dqkv, table, shape, posOffset, true);
}

async function runRotary(
  gpu: GpuContext,
  op: string,
  qkv: Float32Array,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset: number,
  inverse: boolean,
): Promise<Float32Array> {
  checkRotaryInput(op, qkv.length, table, shape, posOffset);
  checkBindingSize(gpu, Math.max(qkv.length, table.cos.length), `${op} tensors`);
  const { cos, sin } = rotaryTableF32(table);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      qkv: pooled.upload(qkv, `${op} qkv`),
      cos: pooled.upload(cos, `${op} cos`),
      sin: pooled.upload(sin, `${op} sin`),
    };
    const batch = gpu.beginBatch(op);
    await encodeRotary(
      gpu,
      batch,
      buffers,
      { ...shape, half: table.half, positions: table.positions },
      { posOffset, inverse },
    );
    batch.submit();
    return await gpu.readF32(buffers.qkv, qkv.length);
  } finally {
    pooled.release();
  }
}
