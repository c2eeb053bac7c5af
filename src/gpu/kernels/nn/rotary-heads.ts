/**
 * GPU wrapper for kernels/nn/rotary_heads.wgsl: rotary positions on q (NH heads) or k (NKV heads)
 * standing alone, one position per row. CPU twin: src/ops/nn/rotary-heads.ts (shapes there).
 * Dispatch: one invocation per (row, head, frequency), rows·H·hs/2 in all, 256 per workgroup over
 * (x, y); each reads one pair of x, one position, one cos and one sin, and writes one pair of out.
 *
 * In place or not: `out` may be left out (then x is rotated in place: bound once, writable, with a
 * placeholder in the read-only slot) or live in another buffer: WebGPU rejects one buffer bound
 * read-only and writable in a dispatch (even at disjoint ranges), so a separate out must not share
 * x's buffer, and positions and the cos/sin table must live apart from out. The table is the one of the tiny GPT's
 * rotary (rotaryTableF32 of src/gpu/kernels/nn/rotary.ts), uploaded once per model.
 *
 * Positions are a GPU buffer (u32, one per row) so a batched decoding step can rotate sequences at
 * different positions without a read back; the encode path cannot check their values, so a
 * position past the table makes its row NaN (see the kernel). The convenience path checks them.
 */
import source from '../../../../kernels/nn/rotary_heads.wgsl?raw';
import {
  checkRotaryHeadsInput,
  checkRotaryHeadsShape,
  type RotaryHeadsShape,
} from '../../../ops/nn/rotary-heads';
import { checkInt } from '../../../ops/validate';
import type { RotaryTable } from '../../../ops/nn/rotary';
import type { Ints } from '../../../ops/nn/floats';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { invocationGrid } from '../advantage-dispatch';
import { scratchBuffer } from '../loss-aggregation';
import { PooledBuffers } from '../run-convenience';
import { checkRef } from './attention';
import { rotaryTableF32 } from './rotary';

const THREADS = 256;

export const rotaryHeadsKernel = defineKernel({
  name: 'rotary_heads',
  source,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'heads', type: 'u32' },
    { name: 'half', type: 'u32' },
    { name: 'table_positions', type: 'u32' },
    { name: 'direction', type: 'f32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'positions', access: 'read' },
    { name: 'cos_table', access: 'read' },
    { name: 'sin_table', access: 'read' },
  ],
});

export interface RotaryHeadsBuffers {
  /** (rows, H·hs) */
  x: BufferRef;
  /** (rows, H·hs); left out: x in place. */
  out?: BufferRef;
  /** (rows) u32 */
  positions: BufferRef;
  /** (tablePositions, half) f32 each */
  cos: BufferRef;
  sin: BufferRef;
}

/**
 * Records the rotation of every head of row r of x to position positions[r]: forward, or with
 * `inverse` the backward (rotation by −angle, applied to dx).
 */
export async function encodeRotaryHeads(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: RotaryHeadsBuffers,
  shape: RotaryHeadsShape & { tablePositions: number },
  options: { inverse?: boolean } = {},
): Promise<void> {
  const op = options.inverse ? 'rotaryHeadsBackward' : 'rotaryHeadsForward';
  const half = shape.headSize / 2;
  const elements = checkRotaryHeadsShape(op, shape, half);
  checkInt(op, 'tablePositions', shape.tablePositions, 1, 2 ** 31 - 1);
  const tableLength = shape.tablePositions * half;
  checkRef(gpu, op, 'x', buffers.x, elements);
  if (buffers.out) checkRef(gpu, op, 'out', buffers.out, elements);
  checkRef(gpu, op, 'positions', buffers.positions, shape.rows);
  checkRef(gpu, op, 'cos', buffers.cos, tableLength);
  checkRef(gpu, op, 'sin', buffers.sin, tableLength);
  const count = shape.rows * shape.heads * half;
  const inPlace = buffers.out === undefined;
  const pipeline = await gpu.pipelines.get(rotaryHeadsKernel, {
    WORKGROUP_SIZE: THREADS,
    IN_PLACE: inPlace ? 1 : 0,
  });
  batch.dispatch(rotaryHeadsKernel, {
    pipeline,
    buffers: {
      x: inPlace ? scratchBuffer(gpu, 'unused rotary-heads x', 16) : buffers.x,
      out: buffers.out ?? buffers.x,
      positions: buffers.positions,
      cos_table: buffers.cos,
      sin_table: buffers.sin,
    },
    uniforms: {
      count,
      heads: shape.heads,
      half,
      table_positions: shape.tablePositions,
      direction: options.inverse ? -1 : 1,
    },
    workgroups: invocationGrid(gpu, count, THREADS),
  });
}

/** Convenience path of rotaryHeadsForward(): the CPU twin's checks, one sync point. */
export function rotaryHeadsForwardGpu(
  gpu: GpuContext,
  x: Float32Array,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
): Promise<Float32Array> {
  return runRotaryHeads(gpu, 'rotaryHeadsForward', x, positions, table, shape, false);
}

/** Convenience path of rotaryHeadsBackward(): the CPU twin's checks, one sync point. */
export function rotaryHeadsBackwardGpu(
  gpu: GpuContext,
  dx: Float32Array,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
): Promise<Float32Array> {
  return runRotaryHeads(gpu, 'rotaryHeadsBackward', dx, positions, table, shape, true);
}

async function runRotaryHeads(
  gpu: GpuContext,
  op: string,
  x: Float32Array,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
  inverse: boolean,
): Promise<Float32Array> {
  checkRotaryHeadsInput(op, x, positions, table, shape);
  const { cos, sin } = rotaryTableF32(table);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      x: pooled.upload(x, `${op} x`),
      out: pooled.storage(x.length, `${op} out`),
      positions: pooled.upload(Uint32Array.from(positions), `${op} positions`),
      cos: pooled.upload(cos, `${op} cos`),
      sin: pooled.upload(sin, `${op} sin`),
    };
    const batch = gpu.beginBatch(op);
    await encodeRotaryHeads(
      gpu,
      batch,
      buffers,
      { ...shape, tablePositions: table.positions },
      { inverse },
    );
    batch.submit();
    return await gpu.readF32(buffers.out, x.length);
  } finally {
    pooled.release();
  }
}
