/**
 * GPU wrapper for kernels/nn/sample.wgsl (seeded sampling with temperature, top-k, top-p); CPU
 * twin: sampleTokens() in src/ops/nn/sample.ts, which documents the algorithm and the log-prob.
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row (sort, scans and the draw in workgroup
 * memory), rows spread over (x, y). The logits are never read back: tokens go straight into a
 * resident buffer for the next forward pass.
 */
import source from '../../../../kernels/nn/sample.wgsl?raw';
import {
  type SampleOptions,
  type Sampled,
  checkSampleInput,
  checkSampleOptions,
  checkSampleShape,
} from '../../../ops/nn/sample';
import { type BufferRef, type CommandBatch, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { COUNTER_RNG_WGSL } from '../../wgsl-lib';
import { checkBindingSize } from '../advantage-dispatch';
import { resolveRowWorkgroupSize, type RowWorkgroupSize } from '../row-workgroup-size';
import { PooledBuffers } from '../run-convenience';

export const sampleKernel = defineKernel({
  name: 'sample',
  source: COUNTER_RNG_WGSL + source,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'vocab', type: 'u32' },
    { name: 'kept', type: 'u32' },
    { name: 'seed', type: 'u32' },
    { name: 'step', type: 'u32' },
    { name: 'temperature', type: 'f32' },
    { name: 'top_p', type: 'f32' },
  ],
  storage: [
    { name: 'logits', access: 'read' },
    { name: 'tokens', access: 'read_write' },
    { name: 'logprobs', access: 'read_write' },
  ],
});

/** The CPU op's options plus the threads per row. */
export interface SampleGpuOptions extends SampleOptions {
  /** Threads per row, a power of two. Default: chosen by defaultRowWorkgroupSize(). */
  workgroupSize?: RowWorkgroupSize;
}

/** Resident buffers (whole buffers or 256-byte-aligned slices of bigger ones). */
export interface SampleBuffers {
  /** logits: (rows, vocab) f32. */
  logits: BufferRef;
  /** tokens: (rows) i32 or u32, written. */
  tokens: BufferRef;
  /** logprobs: (rows) f32, written: log q(token) under the final sampling distribution. */
  logprobs: BufferRef;
}

/** Smallest power of two ≥ n (n ≥ 1). */
function nextPowerOfTwo(n: number): number {
  let p = 1;
  while (p < n) p *= 2;
  return p;
}

/**
 * Records the sampling of one token per row into `batch`: reads logits (rows, vocab), writes
 * tokens (rows) and logprobs (rows). Deterministic in (seed, step); no readback, no allocation
 * beyond the pooled uniform buffer.
 */
export async function encodeSample(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: SampleBuffers,
  rows: number,
  vocab: number,
  options: SampleGpuOptions,
  seed: number,
  step: number,
): Promise<void> {
  checkSampleShape(rows, vocab, seed, step);
  const { temperature, topK, topP } = checkSampleOptions(options);
  const workgroupSize = resolveRowWorkgroupSize(
    'sampleTokens',
    gpu.summary,
    vocab,
    options.workgroupSize,
  );
  checkBindingSize(gpu, rows * vocab, 'sampleTokens logits');
  const pipeline = await gpu.pipelines.get(sampleKernel, {
    WORKGROUP_SIZE: workgroupSize,
    PADDED: nextPowerOfTwo(vocab),
  });
  batch.dispatch(sampleKernel, {
    pipeline,
    buffers,
    uniforms: {
      rows,
      vocab,
      kept: topK === 0 ? vocab : Math.min(topK, vocab),
      seed,
      step,
      temperature,
      top_p: topP,
    },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
}

/**
 * Convenience path: check → upload → encode → submit → read back (one sync point) → release.
 * Same checks and options as sampleTokens().
 */
export async function sampleGpu(
  gpu: GpuContext,
  logits: Float32Array,
  rows: number,
  vocab: number,
  options: SampleGpuOptions,
  seed: number,
  step: number,
): Promise<Sampled> {
  checkSampleInput(logits, rows, vocab, options, seed, step);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      tokens: pooled.storage(rows, 'tokens'),
      logprobs: pooled.storage(rows, 'sample logprobs'),
    };
    const batch = gpu.beginBatch('sampleTokens');
    await encodeSample(gpu, batch, buffers, rows, vocab, options, seed, step);
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
