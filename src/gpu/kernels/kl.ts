/**
 * GPU wrappers for kernels/kl.wgsl (per-token KL estimate and ∂kl/∂logp), kernels/kl_grad.wgsl
 * (gradient × aggregation weights) and kernels/kl_reward_penalty.wgsl (KL in the reward). CPU
 * twins: perTokenKl(), klLoss() and klRewardPenalty() in src/ops/kl.ts.
 * Dispatch: one thread per token, workgroups over (x, y) beyond 65,535. The KL loss adds the loss
 * aggregation (src/gpu/kernels/loss-aggregation.ts) between the two. The reward penalty runs one
 * workgroup per row, then one workgroup for the batch mean, on a resident kl.
 *
 * Resident inputs are checked on the GPU: non-finite logp / refLogp are counted in the input
 * status from klStatus(); pass its `.buffer` as `status` and `await status.check()` after
 * submitting. Without `status` the inputs are trusted.
 */
import klSource from '../../../kernels/kl.wgsl?raw';
import klGradSource from '../../../kernels/kl_grad.wgsl?raw';
import klRewardPenaltySource from '../../../kernels/kl_reward_penalty.wgsl?raw';
import {
  KL_CLAMPS,
  KL_ESTIMATORS,
  checkKlInput,
  checkKlRewardBeta,
  checkKlRewardPenaltyInput,
  resolveKlLossAggregation,
  resolveKlOptions,
  type KlLoss,
  type KlLossOptions,
  type KlOptions,
  type KlRewardPenalty,
  type TokenKl,
} from '../../ops/kl';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel } from '../kernel';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import {
  checkBindingSize,
  encodeAggregateLoss,
  scratchBuffer,
  unusedStatusBuffer,
} from './loss-aggregation';
import { defaultRowWorkgroupSize } from './row-workgroup-size';
import { PooledBuffers, maskTokens, readChecked } from './run-convenience';

export const klKernel = defineKernel({
  name: 'kl',
  source: INPUT_STATUS_WGSL + klSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'logp', access: 'read' },
    { name: 'refLogp', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'kl', access: 'read_write' },
    { name: 'grad', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

export const klGradKernel = defineKernel({
  name: 'kl_grad',
  source: klGradSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'weights', access: 'read' },
    { name: 'grad', access: 'read_write' },
  ],
});

/** Tensor names of the KL kernel's input-status slots. */
export const KL_STATUS_TENSORS = ['logp', 'refLogp'] as const;

/** Input status for encodePerTokenKl / encodeKlLoss; `op` names the op in its errors. */
export function klStatus(gpu: GpuContext, op: 'perTokenKl' | 'klLoss' = 'perTokenKl'): InputStatus {
  return new InputStatus(gpu, op, KL_STATUS_TENSORS);
}

const WORKGROUP_SIZE = 64;

function elementwiseGrid(gpu: GpuContext, count: number): [number, number] {
  return workgroupGrid(
    Math.ceil(count / WORKGROUP_SIZE),
    gpu.summary.limits.maxComputeWorkgroupsPerDimension,
  );
}

function checkShape(gpu: GpuContext, op: string, rows: number, cols: number): number {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  const count = rows * cols;
  checkInt(op, 'rows × cols', count, 1, 2 ** 32 - 1);
  checkBindingSize(gpu, rows, cols, `${op} logp`);
  return count;
}

/**
 * Records the per-token KL of resident buffers. logp, refLogp, mask, kl, grad: (rows, cols) f32;
 * kl and grad (= ∂kl/∂logp) are 0 at masked positions.
 */
export async function encodePerTokenKl(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    logp: GPUBuffer;
    refLogp: GPUBuffer;
    mask: GPUBuffer;
    kl: GPUBuffer;
    grad: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: KlOptions = {},
): Promise<void> {
  const op = 'perTokenKl';
  const { estimator, clamp } = resolveKlOptions(op, options);
  const count = checkShape(gpu, op, rows, cols);
  const pipeline = await gpu.pipelines.get(klKernel, {
    WORKGROUP_SIZE,
    ESTIMATOR: KL_ESTIMATORS.indexOf(estimator),
    CLAMP: KL_CLAMPS.indexOf(clamp),
  });
  batch.dispatch(klKernel, {
    pipeline,
    buffers: { ...buffers, status: buffers.status ?? unusedStatusBuffer(gpu) },
    uniforms: { count },
    workgroups: elementwiseGrid(gpu, count),
  });
}

/**
 * Records the KL loss of resident buffers: kl as in encodePerTokenKl, loss (1 f32) =
 * aggregate(kl), weights (rows, cols) = ∂loss/∂kl, and grad (rows, cols) = ∂loss/∂logp.
 */
export async function encodeKlLoss(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    logp: GPUBuffer;
    refLogp: GPUBuffer;
    mask: GPUBuffer;
    kl: GPUBuffer;
    grad: GPUBuffer;
    loss: GPUBuffer;
    weights: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: KlLossOptions = {},
): Promise<void> {
  const aggregation = resolveKlLossAggregation('klLoss', options);
  const { logp, refLogp, mask, kl, grad, loss, weights, status } = buffers;
  await encodePerTokenKl(
    gpu,
    batch,
    { logp, refLogp, mask, kl, grad, status },
    rows,
    cols,
    options,
  );
  await encodeAggregateLoss(
    gpu,
    batch,
    { tokenLoss: kl, mask, loss, weights },
    rows,
    cols,
    aggregation,
  );
  const count = rows * cols;
  const pipeline = await gpu.pipelines.get(klGradKernel, { WORKGROUP_SIZE });
  batch.dispatch(klGradKernel, {
    pipeline,
    buffers: { weights, grad },
    uniforms: { count },
    workgroups: elementwiseGrid(gpu, count),
  });
}

/**
 * Convenience path: check shapes, options and mask on the CPU (same checks as perTokenKl), upload,
 * run, read back (one sync point). NaN/Inf inputs are found by the kernel and thrown afterwards as
 * the OpInputError the CPU reference throws.
 */
export async function perTokenKlGpu(
  gpu: GpuContext,
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: KlOptions = {},
): Promise<TokenKl> {
  checkKlInput('perTokenKl', logp, refLogp, mask, rows, cols, options, { finite: false });
  checkShape(gpu, 'perTokenKl', rows, cols);
  const n = rows * cols;
  const status = klStatus(gpu, 'perTokenKl');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logp: pooled.upload(logp, 'logp'),
      refLogp: pooled.upload(refLogp, 'refLogp'),
      mask: pooled.upload(mask, 'mask'),
      kl: pooled.storage(n, 'kl'),
      grad: pooled.storage(n, 'kl grad'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('perTokenKl');
    await encodePerTokenKl(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [kl, gradLogp] = await readChecked(gpu, status, [
      [buffers.kl, n],
      [buffers.grad, n],
    ]);
    return { kl, gradLogp };
  } finally {
    pooled.release();
    status.release();
  }
}

/** Convenience path for klLoss: CPU checks, upload, run, read back (one sync point). */
export async function klLossGpu(
  gpu: GpuContext,
  logp: Float32Array,
  refLogp: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: KlLossOptions = {},
): Promise<KlLoss> {
  checkKlInput('klLoss', logp, refLogp, mask, rows, cols, options, { finite: false });
  resolveKlLossAggregation('klLoss', options);
  checkShape(gpu, 'klLoss', rows, cols);
  const tokens = maskTokens(mask);
  const n = rows * cols;
  const status = klStatus(gpu, 'klLoss');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logp: pooled.upload(logp, 'logp'),
      refLogp: pooled.upload(refLogp, 'refLogp'),
      mask: pooled.upload(mask, 'mask'),
      kl: pooled.storage(n, 'kl'),
      grad: pooled.storage(n, 'kl grad'),
      weights: pooled.storage(n, 'kl weights'),
      loss: pooled.storage(1, 'kl loss'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('klLoss');
    await encodeKlLoss(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [kl, gradLogp, loss] = await readChecked(gpu, status, [
      [buffers.kl, n],
      [buffers.grad, n],
      [buffers.loss, 1],
    ]);
    return { kl, gradLogp, loss: loss[0]!, tokens, emptyMask: tokens === 0 };
  } finally {
    pooled.release();
    status.release();
  }
}

const klRewardPenaltyDecl = {
  source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + klRewardPenaltySource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'beta', type: 'f32' },
  ],
  storage: [
    { name: 'tokenRewards', access: 'read' },
    { name: 'kl', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'rewards', access: 'read_write' },
    { name: 'rowMean', access: 'read_write' },
    { name: 'klMean', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
} as const;

export const klRewardPenaltyRowsKernel = defineKernel({
  ...klRewardPenaltyDecl,
  name: 'kl_reward_penalty.rows',
  entryPoint: 'rows',
});

export const klRewardPenaltyMeanKernel = defineKernel({
  ...klRewardPenaltyDecl,
  name: 'kl_reward_penalty.mean',
  entryPoint: 'mean',
});

/** Tensor names of the reward penalty's input-status slots. */
export const KL_REWARD_PENALTY_STATUS_TENSORS = ['tokenRewards', 'kl'] as const;

/** Input status for encodeKlRewardPenalty. */
export function klRewardPenaltyStatus(gpu: GpuContext): InputStatus {
  return new InputStatus(gpu, 'klRewardPenalty', KL_REWARD_PENALTY_STATUS_TENSORS);
}

/**
 * Records the KL reward penalty of resident buffers: tokenRewards, kl (e.g. encodePerTokenKl's
 * output), mask: (rows, cols) f32 → rewards (rows, cols) = tokenRewards − β·m·kl, klMean (1 f32) =
 * mean over rows of each row's masked-mean kl. The mask must hold only 0 and 1.
 */
export async function encodeKlRewardPenalty(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    tokenRewards: GPUBuffer;
    kl: GPUBuffer;
    mask: GPUBuffer;
    rewards: GPUBuffer;
    klMean: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  beta: number,
): Promise<void> {
  const op = 'klRewardPenalty';
  checkKlRewardBeta(beta);
  checkShape(gpu, op, rows, cols);
  const constants = { WORKGROUP_SIZE: defaultRowWorkgroupSize(gpu.summary, cols) };
  const [rowsPipeline, meanPipeline] = await Promise.all([
    gpu.pipelines.get(klRewardPenaltyRowsKernel, constants),
    gpu.pipelines.get(klRewardPenaltyMeanKernel, constants),
  ]);
  const bound = {
    ...buffers,
    rowMean: scratchBuffer(gpu, 'kl reward penalty row means', rows * 4),
    status: buffers.status ?? unusedStatusBuffer(gpu),
  };
  const uniforms = { rows, cols, beta };
  batch.dispatch(klRewardPenaltyRowsKernel, {
    pipeline: rowsPipeline,
    buffers: bound,
    uniforms,
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  // Dispatches in a pass see each other's writes in order: `mean` reads every row mean.
  batch.dispatch(klRewardPenaltyMeanKernel, {
    pipeline: meanPipeline,
    buffers: bound,
    uniforms,
    workgroups: [1],
  });
}

/**
 * Convenience path of klRewardPenalty(): shapes, β and mask checked on the CPU (same checks),
 * upload, run, read back (one sync point). NaN/Inf inputs are found by the kernel and thrown
 * afterwards as the OpInputError the CPU reference throws.
 */
export async function klRewardPenaltyGpu(
  gpu: GpuContext,
  tokenRewards: Float32Array,
  kl: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  beta: number,
): Promise<KlRewardPenalty> {
  checkKlRewardPenaltyInput(tokenRewards, kl, mask, rows, cols, beta, { finite: false });
  checkShape(gpu, 'klRewardPenalty', rows, cols);
  const n = rows * cols;
  const status = klRewardPenaltyStatus(gpu);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      tokenRewards: pooled.upload(tokenRewards, 'tokenRewards'),
      kl: pooled.upload(kl, 'kl'),
      mask: pooled.upload(mask, 'mask'),
      rewards: pooled.storage(n, 'penalized rewards'),
      klMean: pooled.storage(1, 'kl mean'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch('klRewardPenalty');
    await encodeKlRewardPenalty(gpu, batch, buffers, rows, cols, beta);
    batch.submit();
    const [rewards, klMean] = await readChecked(gpu, status, [
      [buffers.rewards, n],
      [buffers.klMean, 1],
    ]);
    return { rewards, klMean: klMean[0]! };
  } finally {
    pooled.release();
    status.release();
  }
}
