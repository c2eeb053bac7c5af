/**
 * GPU wrapper for kernels/token_logprobs_backward.wgsl: the gradient of Σ dLogp·logp +
 * dEntropy·entropy with respect to the logits. CPU twin: tokenLogprobsBackward in
 * src/ops/token-logprobs.ts. Dispatch: one workgroup per row, rows spread over (x, y); three
 * passes over the row (max; Σe and Σe·d; write).
 */
import backwardSource from '../../../kernels/token_logprobs_backward.wgsl?raw';
import {
  checkTokenLogprobsBackwardInput,
  resolveTemperature,
  type TokenLogprobsBackwardOptions,
} from '../../ops/token-logprobs';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus, statusSlotsOf } from '../input-status';
import { defineKernel } from '../kernel';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import { resolveRowWorkgroupSize } from './row-workgroup-size';
import { PooledBuffers, readChecked } from './run-convenience';
import {
  ROW_UNIFORMS,
  targetsSlot,
  checkRowShape,
  unusedBinding,
  type GpuRowOptions,
} from './token-logprobs';

const OP_BACKWARD = 'tokenLogprobsBackward';

export type TokenLogprobsBackwardGpuOptions = TokenLogprobsBackwardOptions & GpuRowOptions;

export const tokenLogprobsBackwardKernel = defineKernel({
  name: 'token_logprobs_backward',
  source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + backwardSource,
  uniforms: ROW_UNIFORMS,
  storage: [
    { name: 'logits', access: 'read' },
    { name: 'targets', access: 'read' },
    { name: 'dLogp', access: 'read' },
    { name: 'dEntropy', access: 'read' },
    { name: 'dLogits', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

/** Status for encodeTokenLogprobsBackward: logits (flat index), targets, dLogp, dEntropy (row). */
export function tokenLogprobsBackwardStatus(gpu: GpuContext, cols: number): InputStatus {
  const slots = statusSlotsOf(backwardSource, {
    logits: 'logits',
    targets: targetsSlot(cols),
    dlogp: 'dLogp',
    dentropy: 'dEntropy',
  });
  return new InputStatus(gpu, OP_BACKWARD, slots);
}

/**
 * Records the gradient with respect to the logits of Σ dLogp·logp + dEntropy·entropy.
 * logits, dLogits: (rows, cols) f32; targets: (rows) i32; dLogp, dEntropy: (rows) f32 (dEntropy
 * omitted = zero); status: from tokenLogprobsBackwardStatus(), or omitted for trusted inputs.
 */
export async function encodeTokenLogprobsBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    logits: GPUBuffer;
    targets: GPUBuffer;
    dLogp: GPUBuffer;
    dEntropy?: GPUBuffer;
    dLogits: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: TokenLogprobsBackwardGpuOptions = {},
): Promise<void> {
  const temperature = resolveTemperature(OP_BACKWARD, options);
  const workgroupSize = resolveRowWorkgroupSize(
    OP_BACKWARD,
    gpu.summary,
    cols,
    options.workgroupSize,
  );
  checkRowShape(gpu, OP_BACKWARD, rows, cols, {
    logits: [buffers.logits, rows * cols * 4],
    targets: [buffers.targets, rows * 4],
    dLogp: [buffers.dLogp, rows * 4],
    dEntropy: [buffers.dEntropy, rows * 4],
    dLogits: [buffers.dLogits, rows * cols * 4],
  });
  const pipeline = await gpu.pipelines.get(tokenLogprobsBackwardKernel, {
    WORKGROUP_SIZE: workgroupSize,
    HAS_DENTROPY: buffers.dEntropy ? 1 : 0,
  });
  batch.dispatch(tokenLogprobsBackwardKernel, {
    pipeline,
    buffers: {
      logits: buffers.logits,
      targets: buffers.targets,
      dLogp: buffers.dLogp,
      dEntropy: buffers.dEntropy ?? unusedBinding(gpu, 'dEntropy'),
      dLogits: buffers.dLogits,
      status: buffers.status ?? unusedBinding(gpu, 'status'),
    },
    uniforms: { rows, cols, temperature },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
}

/** Convenience path for the backward pass: check, upload, run, read back (one sync point). */
export async function tokenLogprobsBackwardGpu(
  gpu: GpuContext,
  logits: Float32Array,
  targets: Int32Array,
  dLogp: Float32Array,
  dEntropy: Float32Array | undefined,
  rows: number,
  cols: number,
  options: TokenLogprobsBackwardGpuOptions = {},
): Promise<Float32Array> {
  checkTokenLogprobsBackwardInput(logits, targets, dLogp, dEntropy, rows, cols, options);
  const status = tokenLogprobsBackwardStatus(gpu, cols);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      targets: pooled.upload(targets, 'targets'),
      dLogp: pooled.upload(dLogp, 'dLogp'),
      dEntropy: dEntropy ? pooled.upload(dEntropy, 'dEntropy') : undefined,
      dLogits: pooled.storage(rows * cols, 'dLogits'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP_BACKWARD);
    await encodeTokenLogprobsBackward(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [dLogits] = await readChecked(gpu, status, [[buffers.dLogits, rows * cols]]);
    return dLogits;
  } finally {
    pooled.release();
    status.release();
  }
}
