/**
 * GPU wrapper for kernels/explained_variance.wgsl; CPU twin: explainedVariance() in
 * src/ops/explained-variance.ts. Three dispatches of one shader:
 *
 *   partial_sums     G workgroups (G ≤ 256), grid-stride: per-group Σ m, Σ m·R, Σ m·(R − V), and
 *                    max R and −min R (Var[R] is exactly 0 when they agree)
 *   partial_squares  G workgroups: per-group centred sums of squares (pass 2 over the tokens)
 *   finish           one workgroup: 8 stats floats, read back once
 *
 * Resident inputs are checked on the GPU: non-finite returns / values are counted in the input
 * status from explainedVarianceStatus(); pass its `.buffer` as `status` and `await status.check()`
 * after submitting. Without `status` the inputs are trusted.
 */
import source from '../../../kernels/explained_variance.wgsl?raw';
import {
  checkExplainedVarianceInput,
  resolveExplainedVarianceOptions,
  type ExplainedVariance,
  type ExplainedVarianceOptions,
} from '../../ops/explained-variance';
import { checkInt } from '../../ops/validate';
import type { CommandBatch } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus } from '../input-status';
import { defineKernel, type KernelDeclaration } from '../kernel';
import { statLayout } from '../stat-record';
import { WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import { checkBindingSize, scratchBuffer, unusedStatusBuffer } from './loss-aggregation';
import { PooledBuffers, readChecked } from './run-convenience';

const OP = 'explainedVariance';

type Storage = 'returns' | 'values' | 'mask' | 'partials' | 'stats' | 'status';
type Uniform = 'count' | 'groups' | 'correction' | 'epsilon';

const declaration = (entryPoint: string): KernelDeclaration<Storage, Uniform> => ({
  name: `explained_variance.${entryPoint}`,
  source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + source,
  entryPoint,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'groups', type: 'u32' },
    { name: 'correction', type: 'u32' },
    { name: 'epsilon', type: 'f32' },
  ],
  storage: [
    { name: 'returns', access: 'read' },
    { name: 'values', access: 'read' },
    { name: 'mask', access: 'read' },
    { name: 'partials', access: 'read_write' },
    { name: 'stats', access: 'read_write' },
    { name: 'status', access: 'read_write' },
  ],
});

export const explainedVarianceSumsKernel = defineKernel(declaration('partial_sums'));
export const explainedVarianceSquaresKernel = defineKernel(declaration('partial_squares'));
export const explainedVarianceFinishKernel = defineKernel(declaration('finish'));

/** Tensor names of the input-status slots. */
export const EXPLAINED_VARIANCE_STATUS_TENSORS = ['returns', 'values'] as const;

export function explainedVarianceStatus(gpu: GpuContext): InputStatus {
  return new InputStatus(gpu, OP, EXPLAINED_VARIANCE_STATUS_TENSORS);
}

/** Floats in the stats buffer: (ev, defined, Var[R], Var[R − V], Σ m, mean R, mean R − V, 0). */
export const EXPLAINED_VARIANCE_STATS = 8;

const WORKGROUP_SIZE = 64;
/** Upper bound on the partial-sum workgroups, so one workgroup reduces the partials quickly. */
const MAX_GROUPS = 256;

/** The stats buffer's statistics, at the kernel's EV_ slots. */
const EV_STATS = statLayout(source, 'EV_', [
  'value',
  'defined',
  'varReturns',
  'varResidual',
  'tokens',
  'meanReturns',
  'meanResidual',
]);

/** Reads the stats buffer's floats into the CPU op's result type. */
export function explainedVarianceFromStats(stats: Float32Array): ExplainedVariance {
  const s = EV_STATS.read(stats);
  const defined = s.defined === 1;
  return {
    value: defined ? s.value : undefined,
    defined,
    varReturns: s.varReturns,
    varResidual: s.varResidual,
    tokens: s.tokens,
  };
}

/**
 * Records the explained variance of resident buffers. returns, values, mask: `count` f32 (any
 * flat layout, e.g. (rows, cols)); stats: EXPLAINED_VARIANCE_STATS f32 (explainedVarianceFromStats
 * reads them).
 */
export async function encodeExplainedVariance(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    returns: GPUBuffer;
    values: GPUBuffer;
    mask: GPUBuffer;
    stats: GPUBuffer;
    status?: GPUBuffer;
  },
  count: number,
  options: ExplainedVarianceOptions = {},
): Promise<void> {
  checkInt(OP, 'count', count, 1, 2 ** 32 - 1);
  checkBindingSize(gpu, 1, count, `${OP} returns`);
  const { correction, epsilon } = resolveExplainedVarianceOptions(options);
  const groups = Math.min(MAX_GROUPS, Math.ceil(count / WORKGROUP_SIZE));
  const partials = scratchBuffer(gpu, 'explained variance partials', 3 * groups * 16);
  const bound = {
    returns: buffers.returns,
    values: buffers.values,
    mask: buffers.mask,
    partials,
    stats: buffers.stats,
    status: buffers.status ?? unusedStatusBuffer(gpu),
  };
  const uniforms = { count, groups, correction, epsilon };
  const constants = { WORKGROUP_SIZE };
  const passes = [
    [explainedVarianceSumsKernel, groups],
    [explainedVarianceSquaresKernel, groups],
    [explainedVarianceFinishKernel, 1],
  ] as const;
  for (const [kernel, workgroups] of passes) {
    const pipeline = await gpu.pipelines.get(kernel, constants);
    batch.dispatch(kernel, { pipeline, buffers: bound, uniforms, workgroups: [workgroups] });
  }
}

/**
 * Convenience path: check shapes, options and mask on the CPU (same checks as explainedVariance),
 * upload, run, read back (one sync point). NaN/Inf inputs are found by the kernel and thrown
 * afterwards as the OpInputError the CPU reference throws.
 */
export async function explainedVarianceGpu(
  gpu: GpuContext,
  returns: Float32Array,
  values: Float32Array,
  mask: Float32Array,
  rows: number,
  cols: number,
  options: ExplainedVarianceOptions = {},
): Promise<ExplainedVariance> {
  checkExplainedVarianceInput(returns, values, mask, rows, cols, options, { finite: false });
  checkBindingSize(gpu, rows, cols, `${OP} returns`);
  const status = explainedVarianceStatus(gpu);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      returns: pooled.upload(returns, 'returns'),
      values: pooled.upload(values, 'values'),
      mask: pooled.upload(mask, 'mask'),
      stats: pooled.storage(EXPLAINED_VARIANCE_STATS, 'explained variance stats'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP);
    await encodeExplainedVariance(gpu, batch, buffers, rows * cols, options);
    batch.submit();
    const [stats] = await readChecked(gpu, status, [[buffers.stats, EXPLAINED_VARIANCE_STATS]]);
    return explainedVarianceFromStats(stats);
  } finally {
    pooled.release();
    status.release();
  }
}
