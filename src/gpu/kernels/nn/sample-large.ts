/**
 * GPU wrapper for kernels/nn/sample_large.wgsl: seeded sampling with temperature, top-k and top-p
 * over any vocabulary up to 2^20 (real models: 49,152 for SmolLM2, 151,936 for Qwen2.5/Qwen3).
 * CPU twin: sampleTokensAnyVocab() in src/ops/nn/sample.ts (the algorithm and the log-prob).
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row, rows spread over (x, y); no sort:
 * each cut-off (top-k, top-p, the draw) is an 8-pass threshold search (4-bit digits) over the row
 * plus a walk of the ties, so a row costs ≤ 34 reads of its logits (13 with top-k ≤ 512: the
 * kept tokens move to workgroup memory) (from cache after the first on a hardware
 * GPU). The logits are never read back: tokens go straight into a resident buffer for the next
 * forward pass. Same buffers and options as encodeSample() (src/gpu/kernels/nn/sample.ts), which
 * sorts in workgroup memory and is limited to V ≤ 1024.
 */
import source from '../../../../kernels/nn/sample_large.wgsl?raw';
import {
  type Sampled,
  SAMPLE_LARGE_MAX_VOCAB,
  checkSampleInput,
  checkSampleOptions,
  checkSampleShape,
} from '../../../ops/nn/sample';
import { OpInputError } from '../../../ops/errors';
import { type BufferRef, type CommandBatch, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkInt } from '../../../ops/validate';
import { COUNTER_RNG_WGSL } from '../../wgsl-lib';
import { checkBindingSize } from '../advantage-dispatch';
import { resolveRowWorkgroupSize } from '../row-workgroup-size';
import { PooledBuffers } from '../run-convenience';
import { checkRefElements } from './add';
import type { SampleBuffers, SampleGpuOptions } from './sample';

const OP = 'sampleTokensAnyVocab';

export const sampleLargeKernel = defineKernel({
  name: 'sample-large',
  source: COUNTER_RNG_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'vocab', type: 'u32' },
    { name: 'kept', type: 'u32' },
    { name: 'seed', type: 'u32' },
    { name: 'step', type: 'u32' },
    { name: 'temperature', type: 'f32' },
    { name: 'top_p', type: 'f32' },
    { name: 'first_row', type: 'u32' },
    { name: 'has_draw_rows', type: 'u32' },
  ],
  storage: [
    { name: 'logits', access: 'read' },
    { name: 'tokens', access: 'read_write' },
    { name: 'logprobs', access: 'read_write' },
    { name: 'draw_rows', access: 'read' },
  ],
});

export interface SampleLargeGpuOptions extends SampleGpuOptions {
  /**
   * The draw's row index of row 0 (default 0): row r draws counterUniform(seed, step, firstRow +
   * r), so a batch that is one part of a larger one draws what the whole batch's rows would.
   */
  firstRow?: number;
  /**
   * (rows) u32: row r draws counterUniform(seed, step, drawRows[r]) — a batch gathered from
   * anywhere in a larger one (a generation's batches, src/models/hf/prompt-buckets.ts). Not with
   * firstRow.
   */
  drawRows?: BufferRef;
}

/**
 * Records the sampling of one token per row into `batch`: reads logits (rows, vocab), vocab ≤ 2^20,
 * writes tokens (rows) and logprobs (rows). Deterministic in (seed, step); no readback, no
 * allocation beyond the pooled uniform buffer.
 */
export async function encodeSampleLarge(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: SampleBuffers,
  rows: number,
  vocab: number,
  options: SampleLargeGpuOptions,
  seed: number,
  step: number,
): Promise<void> {
  checkSampleShape(rows, vocab, seed, step, SAMPLE_LARGE_MAX_VOCAB, OP);
  const firstRow = options.firstRow ?? 0;
  checkInt(OP, 'firstRow', firstRow, 0, 2 ** 32 - 1 - rows);
  if (options.drawRows && options.firstRow !== undefined) {
    throw new OpInputError(OP, 'drawRows', 'is given with firstRow: give one of them');
  }
  if (options.drawRows) checkRefElements(OP, 'drawRows', options.drawRows, rows);
  const { temperature, topK, topP } = checkSampleOptions(options, OP);
  const workgroupSize = resolveRowWorkgroupSize(OP, gpu.summary, vocab, options.workgroupSize);
  checkBindingSize(gpu, rows * vocab, `${OP} logits`);
  const pipeline = await gpu.pipelines.get(sampleLargeKernel, { WORKGROUP_SIZE: workgroupSize });
  batch.dispatch(sampleLargeKernel, {
    pipeline,
    // Without draw rows the logits are bound in their place (read-only both, never read).
    buffers: { ...buffers, draw_rows: options.drawRows ?? buffers.logits },
    uniforms: {
      rows,
      vocab,
      kept: topK === 0 ? vocab : Math.min(topK, vocab),
      seed,
      step,
      temperature,
      top_p: topP,
      first_row: firstRow,
      has_draw_rows: options.drawRows ? 1 : 0,
    },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
}

/**
 * Convenience path: check → upload → encode → submit → read back (one sync point) → release.
 * Same checks and options as sampleTokensAnyVocab().
 */
export async function sampleLargeGpu(
  gpu: GpuContext,
  logits: Float32Array,
  rows: number,
  vocab: number,
  options: SampleLargeGpuOptions,
  seed: number,
  step: number,
): Promise<Sampled> {
  checkSampleInput(logits, rows, vocab, options, seed, step, SAMPLE_LARGE_MAX_VOCAB, OP);
  resolveRowWorkgroupSize(OP, gpu.summary, vocab, options.workgroupSize); // fail before uploading
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      tokens: pooled.storage(rows, 'tokens'),
      logprobs: pooled.storage(rows, 'sample logprobs'),
    };
    const batch = gpu.beginBatch(OP);
    await encodeSampleLarge(gpu, batch, buffers, rows, vocab, options, seed, step);
    batch.submit();
    // Both reads wait on the same submission: one CPU-GPU sync point.
    const [tokens, logprobs] = await Promise.all([
      gpu.read(buffers.tokens, rows * 4),
      gpu.readF32(buffers.logprobs, rows),
    ]);
    return { tokens: new Int32Array(tokens), logprobs };
  } finally {
    pooled.release();
  }
}
