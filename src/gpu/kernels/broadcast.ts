/**
 * GPU wrappers for kernels/broadcast_sum_tokens.wgsl (one invocation per row) and
 * kernels/broadcast_tokens.wgsl (one invocation per element); CPU twins: src/ops/broadcast.ts.
 */
import broadcastSource from '../../../kernels/broadcast_tokens.wgsl?raw';
import sumSource from '../../../kernels/broadcast_sum_tokens.wgsl?raw';
import { checkBroadcastInput, checkSumOverTokensInput } from '../../ops/broadcast';
import { checkInt } from '../../ops/validate';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { checkBindingSize, invocationGrid } from './advantage-dispatch';
import { PooledBuffers, readChecked } from './run-convenience';

const ROW_WORKGROUP_SIZE = 64;
const ELEMENT_WORKGROUP_SIZE = 256;

export const sumTokensKernel = defineKernel({
  name: 'broadcast_sum_tokens',
  source: INPUT_STATUS_WGSL + sumSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'status_slot', type: 'u32' },
  ],
  storage: [
    { name: 'tokens', access: 'read' },
    { name: 'sums', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

export const broadcastTokensKernel = defineKernel({
  name: 'broadcast_tokens',
  source: INPUT_STATUS_WGSL + broadcastSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'status_slot', type: 'u32' },
  ],
  storage: [
    { name: 'seq_values', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'out', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

function checkShape(op: string, rows: number, cols: number): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
}

/** Records row sums: tokens (rows, cols) → sums (rows); tokens checked in status slot `statusSlot`. */
export async function encodeSumOverTokens(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { tokens: GPUBuffer; sums: GPUBuffer; status: GPUBuffer },
  rows: number,
  cols: number,
  statusSlot = 0,
): Promise<void> {
  checkShape('sumOverTokens', rows, cols);
  checkBindingSize(gpu, rows * cols, 'sumOverTokens tokens');
  const pipeline = await gpu.pipelines.get(sumTokensKernel, { WORKGROUP_SIZE: ROW_WORKGROUP_SIZE });
  batch.dispatch(sumTokensKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols, status_slot: statusSlot },
    workgroups: invocationGrid(gpu, rows, ROW_WORKGROUP_SIZE),
  });
}

/**
 * Records out = seqValues broadcast over (rows, cols) where mask = 1, else 0; seqValues checked
 * in status slot `statusSlot`. The mask is trusted to be 0/1.
 */
export async function encodeBroadcastToTokens(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { seqValues: GPUBuffer; mask: GPUBuffer; out: GPUBuffer; status: GPUBuffer },
  rows: number,
  cols: number,
  statusSlot = 0,
): Promise<void> {
  checkShape('broadcastToTokens', rows, cols);
  checkBindingSize(gpu, rows * cols, 'broadcastToTokens out');
  const pipeline = await gpu.pipelines.get(broadcastTokensKernel, {
    WORKGROUP_SIZE: ELEMENT_WORKGROUP_SIZE,
  });
  batch.dispatch(broadcastTokensKernel, {
    pipeline,
    buffers: {
      seq_values: buffers.seqValues,
      mask: buffers.mask,
      out: buffers.out,
      status: buffers.status,
    },
    uniforms: { rows, cols, status_slot: statusSlot },
    workgroups: invocationGrid(gpu, rows * cols, ELEMENT_WORKGROUP_SIZE),
  });
}

/** Convenience path of sumOverTokens(): same checks, one readback. */
export async function sumOverTokensGpu(
  gpu: GpuContext,
  tokens: Float32Array,
  rows: number,
  cols: number,
): Promise<Float32Array> {
  checkSumOverTokensInput(tokens, rows, cols, false);
  checkBindingSize(gpu, rows * cols, 'sumOverTokens tokens');
  const status = new InputStatus(gpu, 'sumOverTokens', ['tokens']);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      tokens: pooled.upload(tokens, 'sumOverTokens tokens'),
      sums: pooled.storage(rows, 'sumOverTokens sums'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('sumOverTokens');
    await encodeSumOverTokens(gpu, batch, buffers, rows, cols);
    batch.submit();
    const [sums] = await readChecked(gpu, status, [[buffers.sums, rows]]);
    return sums;
  } finally {
    pooled.release();
    status.release();
  }
}

/** Convenience path of broadcastToTokens(): same checks, one readback. */
export async function broadcastToTokensGpu(
  gpu: GpuContext,
  seqValues: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
): Promise<Float32Array> {
  checkBroadcastInput(seqValues, mask, rows, cols, false);
  checkBindingSize(gpu, rows * cols, 'broadcastToTokens out');
  const status = new InputStatus(gpu, 'broadcastToTokens', ['seqValues']);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      seqValues: pooled.upload(seqValues, 'broadcast values'),
      mask: pooled.upload(mask, 'broadcast mask'),
      out: pooled.storage(rows * cols, 'broadcast out'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('broadcastToTokens');
    await encodeBroadcastToTokens(gpu, batch, buffers, rows, cols);
    batch.submit();
    const [out] = await readChecked(gpu, status, [[buffers.out, rows * cols]]);
    return out;
  } finally {
    pooled.release();
    status.release();
  }
}
