/**
 * GPU wrapper for kernels/nn/adamw.wgsl (torch.optim.AdamW); CPU twin: adamwStep() in
 * src/ops/nn/adamw.ts. Dispatch: one invocation per parameter, ceil(count / 256) workgroups over
 * (x, y); one read of params, grads, m, v and one write of params, m, v per element.
 *
 * The step's clip scale, whether it runs at all, and the step count t come from the stats buffer
 * that encodeGradNorm (src/gpu/kernels/nn/grad-norm.ts) writes earlier in the same command
 * encoder — no readback in between. Call once per contiguous range of parameters that shares a
 * weight decay (e.g. matrices with 0.01, biases and LayerNorm parameters with 0).
 */
import source from '../../../../kernels/nn/adamw.wgsl?raw';
import { checkAdamWInput, checkAdamWOptions, type AdamWOptions } from '../../../ops/nn/adamw';
import { OpInputError } from '../../../ops/errors';
import { GRAD_STATS } from '../../../ops/nn/grad-norm';
import { checkInt } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { checkRefElements } from './add';
import { GRAD_NORM_LAYOUT_WGSL } from './grad-norm';

const THREADS = 256;
/** Stands in for ln 0 when β = 0 (uniforms must be finite): exp(t · −1e4) is 0 in f32 for t ≥ 1. */
const LOG_ZERO = -1e4;

export const adamwKernel = defineKernel({
  name: 'adamw',
  source: GRAD_NORM_LAYOUT_WGSL + source,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'lr', type: 'f32' },
    { name: 'beta1', type: 'f32' },
    { name: 'beta2', type: 'f32' },
    { name: 'one_minus_beta1', type: 'f32' },
    { name: 'one_minus_beta2', type: 'f32' },
    { name: 'log_beta1', type: 'f32' },
    { name: 'log_beta2', type: 'f32' },
    { name: 'eps', type: 'f32' },
    { name: 'decay', type: 'f32' },
  ],
  storage: [
    // `params` is the name of every kernel's uniform binding, so the parameters are `weights`.
    { name: 'weights', access: 'read_write' },
    { name: 'grads', access: 'read' },
    { name: 'm', access: 'read_write' },
    { name: 'v', access: 'read_write' },
    { name: 'stats', access: 'read' },
  ],
});

/**
 * Records one AdamW step over `count` parameters. params, m, v: (count), updated in place (they
 * may be slices of one buffer: all three are written); grads: (count); stats: 4 f32 from
 * encodeGradNorm. grads and stats are read-only here, so they must live in buffers other than
 * params/m/v (WebGPU forbids a buffer bound writable and read-only in one dispatch).
 */
export async function encodeAdamW(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { params: BufferRef; grads: BufferRef; m: BufferRef; v: BufferRef; stats: BufferRef },
  count: number,
  options: AdamWOptions,
): Promise<void> {
  const op = 'adamw';
  const { lr, beta1, beta2, eps, weightDecay } = checkAdamWOptions(options);
  checkInt(op, 'count', count, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, count, `${op} tensors`);
  for (const name of ['params', 'grads', 'm', 'v'] as const) {
    checkRefElements(op, name, buffers[name], count);
  }
  checkRefElements(op, 'stats', buffers.stats, GRAD_STATS.length);
  const pipeline = await gpu.pipelines.get(adamwKernel, { WORKGROUP_SIZE: THREADS });
  batch.dispatch(adamwKernel, {
    pipeline,
    buffers: {
      weights: buffers.params,
      grads: buffers.grads,
      m: buffers.m,
      v: buffers.v,
      stats: buffers.stats,
    },
    // Derived constants in double precision, rounded once to f32.
    uniforms: {
      count,
      lr,
      beta1,
      beta2,
      one_minus_beta1: 1 - beta1,
      one_minus_beta2: 1 - beta2,
      log_beta1: Math.max(Math.log(beta1), LOG_ZERO),
      log_beta2: Math.max(Math.log(beta2), LOG_ZERO),
      eps,
      decay: 1 - lr * weightDecay,
    },
    workgroups: invocationGrid(gpu, count, THREADS),
  });
}

/**
 * Convenience path: uploads everything, runs encodeAdamW with the given stats (4 f32:
 * [gradNorm, clipScale, applied, step], as encodeGradNorm leaves them) and returns the updated
 * params, m and v (one sync point). With applied = 0 they come back unchanged.
 */
export async function adamwGpu(
  gpu: GpuContext,
  params: Float32Array,
  grads: Float32Array,
  m: Float32Array,
  v: Float32Array,
  stats: Float32Array,
  options: AdamWOptions,
): Promise<{ params: Float32Array; m: Float32Array; v: Float32Array }> {
  checkAdamWOptions(options);
  if (stats.length !== GRAD_STATS.length) {
    throw new OpInputError(
      'adamw',
      'stats',
      `must have ${GRAD_STATS.length} elements, got ${stats.length}`,
    );
  }
  const applied = stats[GRAD_STATS.applied] !== 0;
  // The step and scale are only meaningful (and only read) when the update is applied.
  checkAdamWInput(
    params,
    grads,
    m,
    v,
    applied ? stats[GRAD_STATS.step]! : 1,
    applied ? stats[GRAD_STATS.clipScale]! : 1,
  );
  const count = params.length;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      params: pooled.upload(params, 'adamw params'),
      grads: pooled.upload(grads, 'adamw grads'),
      m: pooled.upload(m, 'adamw m'),
      v: pooled.upload(v, 'adamw v'),
      stats: pooled.upload(stats, 'adamw stats'),
    };
    const batch = gpu.beginBatch('adamw');
    await encodeAdamW(gpu, batch, buffers, count, options);
    batch.submit();
    // The three reads wait on the same submission: one sync point.
    const [p, mOut, vOut] = await Promise.all([
      gpu.readF32(buffers.params, count),
      gpu.readF32(buffers.m, count),
      gpu.readF32(buffers.v, count),
    ]);
    return { params: p, m: mOut, v: vOut };
  } finally {
    pooled.release();
  }
}
