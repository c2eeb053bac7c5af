/**
 * GPU wrapper for kernels/gae.wgsl; CPU twin: src/ops/gae.ts.
 * Dispatch: one invocation per row scanning its T steps backward; rows over (x, y) workgroups.
 */
import source from '../../../kernels/gae.wgsl?raw';
import {
  type GaeInput,
  type GaeOptions,
  type GaeResult,
  checkGaeInput,
  resolveGaeOptions,
} from '../../ops/gae';
import { checkInt } from '../../ops/validate';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { checkBindingSize, invocationGrid } from './advantage-dispatch';
import { PooledBuffers, readChecked } from './run-convenience';

const WORKGROUP_SIZE = 64;

export const gaeKernel = defineKernel({
  name: 'gae',
  source: INPUT_STATUS_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'gamma', type: 'f32' },
    { name: 'lambda', type: 'f32' },
    { name: 'zero_step', type: 'u32' },
    { name: 'has_dones', type: 'u32' },
    { name: 'has_bootstrap', type: 'u32' },
  ],
  storage: [
    { name: 'rewards', access: 'read' },
    { name: 'values', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'dones', access: 'read' },
    { name: 'bootstrap', access: 'read' },
    { name: 'advantages', access: 'read_write' },
    { name: 'returns', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

/** Status slots of the gae kernel, for `new InputStatus(gpu, 'gae', GAE_STATUS_TENSORS)`. */
export const GAE_STATUS_TENSORS = ['rewards', 'values', 'bootstrapValue'] as const;

export interface GaeBuffers {
  /** (rows, cols) f32 each. */
  rewards: GPUBuffer;
  values: GPUBuffer;
  /** (rows, cols) 0/1, trusted (checked on the CPU by gaeGpu). */
  mask: GPUBuffer;
  dones?: GPUBuffer;
  /** (rows) f32. */
  bootstrapValue?: GPUBuffer;
  /** Outputs (rows, cols) f32. */
  advantages: GPUBuffer;
  returns: GPUBuffer;
  /** An InputStatus buffer with the slots of GAE_STATUS_TENSORS. */
  status: GPUBuffer;
}

/** Records GAE over resident buffers into `batch`. */
export async function encodeGae(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: GaeBuffers,
  rows: number,
  cols: number,
  options: GaeOptions = {},
): Promise<void> {
  const { gamma, lambda, maskMode } = resolveGaeOptions(options);
  checkInt('gae', 'rows', rows, 1, 2 ** 31 - 1);
  checkInt('gae', 'cols', cols, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, rows * cols, 'gae rewards');
  const pipeline = await gpu.pipelines.get(gaeKernel, { WORKGROUP_SIZE });
  batch.dispatch(gaeKernel, {
    pipeline,
    buffers: {
      rewards: buffers.rewards,
      values: buffers.values,
      mask: buffers.mask,
      // Read-only stand-ins when absent; the kernel does not read them (has_* = 0).
      dones: buffers.dones ?? buffers.mask,
      bootstrap: buffers.bootstrapValue ?? buffers.values,
      advantages: buffers.advantages,
      returns: buffers.returns,
      status: buffers.status,
    },
    uniforms: {
      rows,
      cols,
      gamma,
      lambda,
      zero_step: maskMode === 'zero-step' ? 1 : 0,
      has_dones: buffers.dones ? 1 : 0,
      has_bootstrap: buffers.bootstrapValue ? 1 : 0,
    },
    workgroups: invocationGrid(gpu, rows, WORKGROUP_SIZE),
  });
}

/** Convenience path: check, upload, run, read back. Same checks and options as gae(). */
export async function gaeGpu(
  gpu: GpuContext,
  input: GaeInput,
  rows: number,
  cols: number,
  options: GaeOptions = {},
): Promise<GaeResult> {
  const settings = checkGaeInput(input, rows, cols, options, false);
  const n = rows * cols;
  checkBindingSize(gpu, n, 'gae rewards');
  const status = new InputStatus(gpu, 'gae', GAE_STATUS_TENSORS);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers: GaeBuffers = {
      rewards: pooled.upload(input.rewards, 'gae rewards'),
      values: pooled.upload(input.values, 'gae values'),
      mask: pooled.upload(input.mask, 'gae mask'),
      advantages: pooled.storage(n, 'gae advantages'),
      returns: pooled.storage(n, 'gae returns'),
      status: status.buffer,
    };
    if (input.dones) buffers.dones = pooled.upload(input.dones, 'gae dones');
    if (input.bootstrapValue) {
      buffers.bootstrapValue = pooled.upload(input.bootstrapValue, 'gae bootstrap');
    }
    const batch = gpu.beginBatch('gae');
    await encodeGae(gpu, batch, buffers, rows, cols, settings);
    batch.submit();
    const [advantages, returns] = await readChecked(gpu, status, [
      [buffers.advantages, n],
      [buffers.returns, n],
    ]);
    return { advantages, returns };
  } finally {
    pooled.release();
    status.release();
  }
}
