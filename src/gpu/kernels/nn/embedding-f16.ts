/**
 * GPU wrapper for kernels/nn/embedding_f16.wgsl: token rows of an f16-stored embedding table,
 * widened to f32 (the Llama family's embed_tokens; no position table). CPU twin: unpackF16 then
 * embeddingForward with no wpe (src/ops/nn/unpack-f16.ts, src/ops/nn/embedding.ts).
 * Dispatch: one invocation per output pair (N·C / 2), grid over (x, y).
 *
 *   tokens: (N) u32 ids   wte: (V·C / 2) u32 words of halves   x: (N, C) f32
 *
 * Like the f32 kernel, the encode path does not check ids: an id ≥ V gives a zero row.
 */
import source from '../../../../kernels/nn/embedding_f16.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import { checkTableRows, checkTokenIds, type TableRows } from '../../../ops/nn/embedding';
import type { Ints } from '../../../ops/nn/floats';
import { checkInt } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { ELEMENTWISE_WORKGROUP_SIZE, checkRefElements } from './add';

export const embeddingF16Kernel = defineKernel({
  name: 'embedding_f16',
  source,
  uniforms: [
    { name: 'pairs', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'vocab', type: 'u32' },
    { name: 'row_start', type: 'u32' },
    { name: 'part_rows', type: 'u32' },
  ],
  storage: [
    { name: 'tokens', access: 'read' },
    { name: 'wte', access: 'read' },
    { name: 'x', access: 'read_write' },
  ],
});

export interface EmbeddingF16Shape {
  /** N, token rows (B·T). */
  rows: number;
  /** C, even: a pair of halves never straddles two rows. */
  channels: number;
  /** V. */
  vocab: number;
}

const OP = 'embeddingF16Forward';

function checkShape(shape: EmbeddingF16Shape): void {
  checkInt(OP, 'rows', shape.rows, 1, 2 ** 31 - 1);
  checkInt(OP, 'channels', shape.channels, 2, 2 ** 31 - 1);
  checkInt(OP, 'vocab', shape.vocab, 1, 2 ** 31 - 1);
  if (shape.channels % 2 !== 0) {
    throw new OpInputError(OP, 'channels', `must be even (f16 pairs), got ${shape.channels}`);
  }
  // Word indices token·C/2 + c/2 and output indices are u32 on the GPU.
  const largest = Math.max(shape.vocab, shape.rows) * shape.channels;
  if (largest > 2 ** 32 - 1) {
    throw new OpInputError(OP, 'channels', `makes a tensor of ${largest} elements (max 2^32 − 1)`);
  }
}

/**
 * Records x = widened wte rows of `tokens`. x must be another buffer than tokens and wte. With
 * `part`, wte holds only rows part.rowStart … + part.rows − 1 of the (V, C) table (one part of a
 * table split by rows): the rows of x whose token it holds are written, the others left as they are.
 */
export async function encodeEmbeddingF16(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { tokens: BufferRef; wte: BufferRef; x: BufferRef },
  shape: EmbeddingF16Shape,
  part?: TableRows,
): Promise<void> {
  checkShape(shape);
  const { rows, channels, vocab } = shape;
  const { rowStart, rows: partRows } = checkTableRows(OP, vocab, part);
  const words = (partRows * channels) / 2;
  checkBindingSize(gpu, Math.max(rows * channels, words), `${OP} tensors`);
  checkRefElements(OP, 'tokens', buffers.tokens, rows);
  checkRefElements(OP, 'wte', buffers.wte, words);
  checkRefElements(OP, 'x', buffers.x, rows * channels);
  const pairs = (rows * channels) / 2;
  const pipeline = await gpu.pipelines.get(embeddingF16Kernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(embeddingF16Kernel, {
    pipeline,
    buffers,
    uniforms: { pairs, channels, vocab, row_start: rowStart, part_rows: partRows },
    workgroups: invocationGrid(gpu, pairs, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path: ids checked on the CPU (as embeddingForward does), upload, run, read. */
export async function embeddingF16Gpu(
  gpu: GpuContext,
  tokens: Ints,
  wte: Uint32Array,
  shape: EmbeddingF16Shape,
): Promise<Float32Array> {
  checkShape(shape);
  if (tokens.length !== shape.rows) {
    throw new OpInputError(
      OP,
      'tokens',
      `must have ${shape.rows} ids (rows), got ${tokens.length}`,
    );
  }
  if (wte.length !== (shape.vocab * shape.channels) / 2) {
    throw new OpInputError(
      OP,
      'wte',
      `must have V·C/2 = ${(shape.vocab * shape.channels) / 2} words, got ${wte.length}`,
    );
  }
  checkTokenIds(OP, tokens, shape.vocab, shape.rows);
  const count = shape.rows * shape.channels;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      tokens: pooled.upload(Int32Array.from(tokens), 'embeddingF16 tokens'),
      wte: pooled.upload(wte, 'embeddingF16 wte'),
      x: pooled.storage(count, 'embeddingF16 x'),
    };
    const batch = gpu.beginBatch(OP);
    await encodeEmbeddingF16(gpu, batch, buffers, shape);
    batch.submit();
    return await gpu.readF32(buffers.x, count);
  } finally {
    pooled.release();
  }
}
