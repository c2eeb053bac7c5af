/**
 * GPU wrapper for the global gradient norm + clipping (PyTorch clip_grad_norm_ semantics):
 * kernels/nn/grad_norm_partials.wgsl then kernels/nn/grad_norm_finish.wgsl. CPU twins:
 * gradNorm() and clipScale() in src/ops/nn/grad-norm.ts.
 * Dispatch: stage 1 — one workgroup of 64 threads per block of 2,048 gradients (grid over (x, y)),
 * one read of the gradients; stage 2 — one workgroup of 64 threads over the partials (3 floats
 * per block).
 * Deterministic: the split depends only on the count, and both stages reduce in a fixed order.
 *
 * Writes the optimizer's stats (4 f32, GRAD_STATS): [gradNorm, clipScale, applied, step]. With a
 * finite norm: clipScale, applied = 1, step += 1. Otherwise clipScale = 0, applied = 0 and the
 * step is unchanged, so encodeAdamW, recorded after it, skips the update.
 */
import finishSource from '../../../../kernels/nn/grad_norm_finish.wgsl?raw';
import layoutSource from '../../../../kernels/lib/grad_norm_layout.wgsl?raw';
import partialsSource from '../../../../kernels/nn/grad_norm_partials.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import { GRAD_STATS, checkMaxNorm, clippingEnabled } from '../../../ops/nn/grad-norm';
import { checkInt } from '../../../ops/validate';
import { type BufferRef, type CommandBatch, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { statLayout } from '../../stat-record';
import { reflectConstant } from '../../wgsl-reflect';
import { WORKGROUP_REDUCE_WGSL } from '../../wgsl-lib';
import { checkBindingSize } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { checkRefElements } from './add';

// 64 threads per workgroup: enough for a memory-bound pass (more workgroups instead), and
// SwiftShader compiles these reductions ~5× faster than at 256.
const THREADS = 64;
const ITEMS_PER_THREAD = 32;
/** Gradients per stage-1 workgroup. */
export const GRAD_NORM_BLOCK = THREADS * ITEMS_PER_THREAD;
/**
 * The layout the grad-norm kernels and AdamW share, prepended to their sources: the floats per
 * stage-1 partial (Σ g² of finite values, NaN count, ±Inf count) and the stats words, which must
 * sit where GRAD_STATS (the CPU op's) says. Checked when loaded.
 */
export const GRAD_NORM_LAYOUT_WGSL = layoutSource;
const PARTIAL_FLOATS = reflectConstant(layoutSource, 'PARTIAL_FLOATS');
const STATS = statLayout(layoutSource, 'STAT_', ['gradNorm', 'clipScale', 'applied', 'step']);
for (const [name, slot] of Object.entries(STATS.slots)) {
  if (GRAD_STATS[name as keyof typeof STATS.slots] !== slot || STATS.length !== GRAD_STATS.length) {
    throw new Error(
      `grad_norm_layout.wgsl: STAT_ slots ${JSON.stringify(STATS.slots)} differ from GRAD_STATS`,
    );
  }
}

export const gradNormPartialsKernel = defineKernel({
  name: 'grad_norm_partials',
  source: layoutSource + WORKGROUP_REDUCE_WGSL + partialsSource,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'blocks', type: 'u32' },
  ],
  storage: [
    { name: 'grads', access: 'read' },
    { name: 'partials', access: 'read_write' },
  ],
});

export const gradNormFinishKernel = defineKernel({
  name: 'grad_norm_finish',
  source: layoutSource + WORKGROUP_REDUCE_WGSL + finishSource,
  uniforms: [
    { name: 'blocks', type: 'u32' },
    { name: 'max_norm', type: 'f32' },
  ],
  storage: [
    { name: 'partials', access: 'read' },
    { name: 'stats', access: 'read_write' },
  ],
});

/** f32 elements of the scratch buffer encodeGradNorm needs for `count` gradients. */
export function gradNormPartialsLength(count: number): number {
  checkInt('gradNorm', 'count', count, 1, 2 ** 31 - 1);
  return PARTIAL_FLOATS * Math.ceil(count / GRAD_NORM_BLOCK);
}

/**
 * Records the global norm of `grads` (count f32, may be a slice of the flat gradient buffer) and
 * its clip scale into `stats` (4 f32; step, word 3, is read and incremented). partials: scratch
 * of gradNormPartialsLength(count) f32. maxNorm: PyTorch max_norm; ≤ 0 or Infinity disables
 * clipping. grads, partials and stats must be three different buffers.
 */
export async function encodeGradNorm(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { grads: BufferRef; partials: BufferRef; stats: BufferRef },
  count: number,
  maxNorm: number,
): Promise<void> {
  const op = 'gradNorm';
  checkMaxNorm(op, maxNorm);
  const partialsLength = gradNormPartialsLength(count);
  const blocks = partialsLength / PARTIAL_FLOATS;
  checkBindingSize(gpu, count, `${op} grads`);
  checkRefElements(op, 'grads', buffers.grads, count);
  checkRefElements(op, 'partials', buffers.partials, partialsLength);
  checkRefElements(op, 'stats', buffers.stats, GRAD_STATS.length);
  const [partialsPipeline, finishPipeline] = await Promise.all([
    gpu.pipelines.get(gradNormPartialsKernel, {
      WORKGROUP_SIZE: THREADS,
      ITEMS_PER_THREAD,
    }),
    gpu.pipelines.get(gradNormFinishKernel, { WORKGROUP_SIZE: THREADS }),
  ]);
  batch.dispatch(gradNormPartialsKernel, {
    pipeline: partialsPipeline,
    buffers: { grads: buffers.grads, partials: buffers.partials },
    uniforms: { count, blocks },
    workgroups: workgroupGrid(blocks, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  batch.dispatch(gradNormFinishKernel, {
    pipeline: finishPipeline,
    buffers: { partials: buffers.partials, stats: buffers.stats },
    // The kernel takes 0 for "no clipping" (uniforms must be finite).
    uniforms: { blocks, max_norm: clippingEnabled(maxNorm) ? maxNorm : 0 },
    workgroups: [1],
  });
}

/**
 * Convenience path: uploads `grads` and `stats` (4 f32, default zeros: step 0), runs
 * encodeGradNorm and returns the new stats [gradNorm, clipScale, applied, step] (one sync point).
 */
export async function gradNormGpu(
  gpu: GpuContext,
  grads: Float32Array,
  maxNorm: number,
  stats: Float32Array = new Float32Array(GRAD_STATS.length),
): Promise<Float32Array> {
  const op = 'gradNorm';
  checkMaxNorm(op, maxNorm);
  if (grads.length < 1) throw new OpInputError(op, 'grads', 'must not be empty');
  if (stats.length !== GRAD_STATS.length) {
    throw new OpInputError(
      op,
      'stats',
      `must have ${GRAD_STATS.length} elements, got ${stats.length}`,
    );
  }
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      grads: pooled.upload(grads, 'gradNorm grads'),
      partials: pooled.storage(gradNormPartialsLength(grads.length), 'gradNorm partials'),
      stats: pooled.upload(stats, 'gradNorm stats'),
    };
    const batch = gpu.beginBatch('gradNorm');
    await encodeGradNorm(gpu, batch, buffers, grads.length, maxNorm);
    batch.submit();
    return await gpu.readF32(buffers.stats, GRAD_STATS.length);
  } finally {
    pooled.release();
  }
}
