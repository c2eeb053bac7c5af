/**
 * GPU wrappers for kernels/nn/embedding_forward.wgsl and kernels/nn/embedding_backward_{wte,wpe}.wgsl;
 * CPU twins: src/ops/nn/embedding.ts.
 * Forward: one invocation per element of x (B·T·C), grid over (x, y).
 * Backward: dwte — one workgroup of 64 threads per (vocab row, 64 channels), each scanning all B·T
 * token ids in order (deterministic, no atomics); dwpe — one invocation per element of dwpe,
 * looping over the batch. Both are recorded into the same pass (they write different bindings).
 *
 * The encode paths do not check token ids (they come from the lab's own tokenizer and sampler):
 * ids ≥ V — and negative Int32 ids, which read as huge u32 — are ignored (a zero token row in the
 * forward pass, no gradient row in the backward pass), so the kernels never read out of bounds.
 * The convenience paths check ids on the CPU first, like the CPU twin.
 */
import backwardWpeSource from '../../../../kernels/nn/embedding_backward_wpe.wgsl?raw';
import backwardWteSource from '../../../../kernels/nn/embedding_backward_wte.wgsl?raw';
import forwardSource from '../../../../kernels/nn/embedding_forward.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import type { Ints } from '../../../ops/nn/floats';
import {
  checkEmbeddingBackwardInput,
  checkEmbeddingForwardInput,
  checkEmbeddingShape,
  checkTableRows,
  type EmbeddingBackwardOptions,
  type EmbeddingShape,
  type TableRows,
} from '../../../ops/nn/embedding';
import { type BufferRef, type CommandBatch, workgroupGrid } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { checkRefElements } from './add';

const ELEMENTWISE_THREADS = 256;
/** Threads (= channels and token ids per tile) of a dwte workgroup. */
const WTE_THREADS = 64;

export const embeddingForwardKernel = defineKernel({
  name: 'embedding_forward',
  source: forwardSource,
  uniforms: [
    { name: 'count', type: 'u32' },
    { name: 'seq', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'vocab', type: 'u32' },
    { name: 'pos_offset', type: 'u32' },
    { name: 'has_wpe', type: 'u32' },
    { name: 'row_start', type: 'u32' },
    { name: 'part_rows', type: 'u32' },
  ],
  storage: [
    { name: 'tokens', access: 'read' },
    { name: 'wte', access: 'read' },
    { name: 'wpe', access: 'read' },
    { name: 'x', access: 'read_write' },
  ],
});

export const embeddingBackwardWteKernel = defineKernel({
  name: 'embedding_backward_wte',
  source: backwardWteSource,
  uniforms: [
    { name: 'tokens_count', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'vocab', type: 'u32' },
    { name: 'col_blocks', type: 'u32' },
    { name: 'accumulate', type: 'u32' },
  ],
  storage: [
    { name: 'dx', access: 'read' },
    { name: 'tokens', access: 'read' },
    { name: 'dwte', access: 'read_write' },
  ],
});

export const embeddingBackwardWpeKernel = defineKernel({
  name: 'embedding_backward_wpe',
  source: backwardWpeSource,
  uniforms: [
    { name: 'batch', type: 'u32' },
    { name: 'seq', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'count', type: 'u32' },
  ],
  storage: [
    { name: 'dx', access: 'read' },
    { name: 'dwpe', access: 'read_write' },
  ],
});

/** Checks tokens' binding size (u32 elements, same 4 bytes as f32) and the f32 tensors'. */
function checkRefs(op: string, refs: Record<string, [BufferRef, number]>): void {
  for (const [name, [ref, elements]] of Object.entries(refs)) {
    checkRefElements(op, name, ref, elements);
  }
}

/**
 * Records x (B, T, C) = wte[tokens] + wpe[posOffset + t]. tokens: (B, T) u32/i32 ids; wte: (V, C);
 * wpe: (maxSeq, C), or absent for a model with rotary positions (x = the token rows; wte is then
 * bound in wpe's slot too, unread). x must not share a buffer with the inputs (it is the only
 * writable binding). With `part`, wte holds only rows part.rowStart … + part.rows − 1 of the
 * table (one part of a table split by rows; no wpe): the rows of x whose token it holds are
 * written, the others left as they are.
 */
export async function encodeEmbeddingForward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { tokens: BufferRef; wte: BufferRef; wpe?: BufferRef; x: BufferRef },
  shape: EmbeddingShape,
  posOffset = 0,
  part?: TableRows,
): Promise<void> {
  const op = 'embeddingForward';
  checkEmbeddingShape(op, shape, posOffset);
  const { batch: B, seq: T, channels: C, vocab: V, maxSeq } = shape;
  const { rowStart, rows: partRows } = checkTableRows(op, V, part);
  if (part && buffers.wpe) {
    throw new OpInputError(op, 'part', 'needs a model without a position table (wpe)');
  }
  const count = B * T * C;
  checkBindingSize(gpu, Math.max(count, partRows * C, maxSeq * C), `${op} tensors`);
  checkRefs(op, {
    tokens: [buffers.tokens, B * T],
    wte: [buffers.wte, partRows * C],
    ...(buffers.wpe ? { wpe: [buffers.wpe, maxSeq * C] as [BufferRef, number] } : {}),
    x: [buffers.x, count],
  });
  const pipeline = await gpu.pipelines.get(embeddingForwardKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_THREADS,
  });
  batch.dispatch(embeddingForwardKernel, {
    pipeline,
    buffers: { ...buffers, wpe: buffers.wpe ?? buffers.wte },
    uniforms: {
      count,
      seq: T,
      channels: C,
      vocab: V,
      pos_offset: posOffset,
      has_wpe: buffers.wpe ? 1 : 0,
      row_start: rowStart,
      part_rows: partRows,
    },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_THREADS),
  });
}

/**
 * Records dwte (V, C) = Σ of dx rows per token id (+= when accumulateDwte: tied embeddings, the LM
 * head wrote its part first) and dwpe (maxSeq, C): rows t < T = Σ_b dx[b, t], other rows 0.
 * dx: (B, T, C); tokens: (B, T). dwte and dwpe may be slices of one gradient buffer (both are
 * written), but neither may share a buffer with dx or tokens.
 */
export async function encodeEmbeddingBackward(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { dx: BufferRef; tokens: BufferRef; dwte: BufferRef; dwpe?: BufferRef },
  shape: EmbeddingShape,
  options: { accumulateDwte?: boolean } = {},
): Promise<void> {
  const op = 'embeddingBackward';
  checkEmbeddingShape(op, shape);
  const { batch: B, seq: T, channels: C, vocab: V, maxSeq } = shape;
  checkBindingSize(gpu, Math.max(B * T * C, V * C, maxSeq * C), `${op} tensors`);
  checkRefs(op, {
    dx: [buffers.dx, B * T * C],
    tokens: [buffers.tokens, B * T],
    dwte: [buffers.dwte, V * C],
    ...(buffers.dwpe ? { dwpe: [buffers.dwpe, maxSeq * C] as [BufferRef, number] } : {}),
  });
  const [wtePipeline, wpePipeline] = await Promise.all([
    gpu.pipelines.get(embeddingBackwardWteKernel, { WORKGROUP_SIZE: WTE_THREADS }),
    gpu.pipelines.get(embeddingBackwardWpeKernel, { WORKGROUP_SIZE: ELEMENTWISE_THREADS }),
  ]);
  const colBlocks = Math.ceil(C / WTE_THREADS);
  batch.dispatch(embeddingBackwardWteKernel, {
    pipeline: wtePipeline,
    buffers: { dx: buffers.dx, tokens: buffers.tokens, dwte: buffers.dwte },
    uniforms: {
      tokens_count: B * T,
      channels: C,
      vocab: V,
      col_blocks: colBlocks,
      accumulate: options.accumulateDwte ? 1 : 0,
    },
    workgroups: workgroupGrid(V * colBlocks, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
  // Without a wpe table (rotary positions) there is no dwpe to write.
  if (!buffers.dwpe) return;
  batch.dispatch(embeddingBackwardWpeKernel, {
    pipeline: wpePipeline,
    buffers: { dx: buffers.dx, dwpe: buffers.dwpe },
    uniforms: { batch: B, seq: T, channels: C, count: maxSeq * C },
    workgroups: invocationGrid(gpu, maxSeq * C, ELEMENTWISE_THREADS),
  });
}

/** Convenience path of embeddingForward(): same checks (token ids included), upload, run, read. */
export async function embeddingForwardGpu(
  gpu: GpuContext,
  tokens: Ints,
  wte: Float32Array,
  wpe: Float32Array | undefined,
  shape: EmbeddingShape,
  posOffset = 0,
): Promise<Float32Array> {
  checkEmbeddingForwardInput(tokens, wte, wpe, shape, posOffset);
  const count = shape.batch * shape.seq * shape.channels;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      tokens: pooled.upload(tokens, 'embedding tokens'),
      wte: pooled.upload(wte, 'embedding wte'),
      ...(wpe ? { wpe: pooled.upload(wpe, 'embedding wpe') } : {}),
      x: pooled.storage(count, 'embedding x'),
    };
    const batch = gpu.beginBatch('embeddingForward');
    await encodeEmbeddingForward(gpu, batch, buffers, shape, posOffset);
    batch.submit();
    return await gpu.readF32(buffers.x, count);
  } finally {
    pooled.release();
  }
}

type GpuBackwardOptions = EmbeddingBackwardOptions<Float32Array>;

/**
 * Convenience path of embeddingBackward(): same checks and options, upload, run, read back (one
 * sync point). With `wpe: false` no dwpe buffer is bound, so embedding_backward_wpe is not recorded
 * (the decision encodeEmbeddingBackward makes for rotary models) and no dwpe is returned.
 */
export async function embeddingBackwardGpu(
  gpu: GpuContext,
  dx: Float32Array,
  tokens: Ints,
  shape: EmbeddingShape,
  options: GpuBackwardOptions & { wpe: false },
): Promise<{ dwte: Float32Array }>;
export async function embeddingBackwardGpu(
  gpu: GpuContext,
  dx: Float32Array,
  tokens: Ints,
  shape: EmbeddingShape,
  options?: GpuBackwardOptions & { wpe?: true },
): Promise<{ dwte: Float32Array; dwpe: Float32Array }>;
export async function embeddingBackwardGpu(
  gpu: GpuContext,
  dx: Float32Array,
  tokens: Ints,
  shape: EmbeddingShape,
  options: GpuBackwardOptions,
): Promise<{ dwte: Float32Array; dwpe?: Float32Array }>;
export async function embeddingBackwardGpu(
  gpu: GpuContext,
  dx: Float32Array,
  tokens: Ints,
  shape: EmbeddingShape,
  options: GpuBackwardOptions = {},
): Promise<{ dwte: Float32Array; dwpe?: Float32Array }> {
  const { accumulateDwte, wpe = true } = options;
  checkEmbeddingBackwardInput(dx, tokens, shape, accumulateDwte);
  const wteCount = shape.vocab * shape.channels;
  const wpeCount = shape.maxSeq * shape.channels;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      dx: pooled.upload(dx, 'embedding dx'),
      tokens: pooled.upload(tokens, 'embedding tokens'),
      dwte: accumulateDwte
        ? pooled.upload(accumulateDwte, 'embedding dwte')
        : pooled.storage(wteCount, 'embedding dwte'),
      ...(wpe ? { dwpe: pooled.storage(wpeCount, 'embedding dwpe') } : {}),
    };
    const batch = gpu.beginBatch('embeddingBackward');
    await encodeEmbeddingBackward(gpu, batch, buffers, shape, {
      accumulateDwte: accumulateDwte !== undefined,
    });
    batch.submit();
    if (!buffers.dwpe) return { dwte: await gpu.readF32(buffers.dwte, wteCount) };
    // Both reads wait on the same submission: one sync point.
    const [dwte, dwpe] = await Promise.all([
      gpu.readF32(buffers.dwte, wteCount),
      gpu.readF32(buffers.dwpe, wpeCount),
    ]);
    return { dwte, dwpe };
  } finally {
    pooled.release();
  }
}
