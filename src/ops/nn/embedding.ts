/**
 * Token + learned position embeddings (GPT-2's wte / wpe), the CPU reference for
 * kernels/nn/embedding_forward.wgsl and kernels/nn/embedding_backward_{wte,wpe}.wgsl.
 *
 *   x[b, t, :] = wte[tokens[b, t], :] + wpe[posOffset + t, :]
 *
 * Without wpe (a model with rotary positions, which enter in attention instead) x is the token
 * row alone, and the backward pass, told `wpe: false`, computes and returns no dwpe, as the GPU
 * path skips embedding_backward_wpe.wgsl when it is given no dwpe buffer.
 *
 * Shapes: B = batch, T = seq, C = channels, V = vocab; tokens (B, T) ids; wte (V, C);
 * wpe (maxSeq, C); x (B, T, C), all row-major.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength } from '../validate';
import { zerosLike, type Floats, type Ints } from './floats';

export interface EmbeddingShape {
  /** B, ≥ 1. */
  batch: number;
  /** T, the tokens per row, 1 … maxSeq. */
  seq: number;
  /** C, the embedding width, ≥ 1. */
  channels: number;
  /** V, the vocabulary size (rows of wte), ≥ 1. */
  vocab: number;
  /** Rows of wpe (the context length), ≥ 1. */
  maxSeq: number;
}

const OP_FORWARD = 'embeddingForward';
const OP_BACKWARD = 'embeddingBackward';
const U32_MAX = 2 ** 32 - 1;

/**
 * Most token ids (B·T) one call takes: the GPU's dwte kernel has every vocabulary row scan all of
 * them (deterministic, no atomics), which stays cheap up to this size.
 */
export const EMBEDDING_MAX_TOKENS = 65_536;

/** Integer checks on the shape (and posOffset + seq ≤ maxSeq); shared with the GPU wrappers. */
export function checkEmbeddingShape(op: string, shape: EmbeddingShape, posOffset = 0): void {
  checkInt(op, 'batch', shape.batch, 1, EMBEDDING_MAX_TOKENS);
  checkInt(op, 'maxSeq', shape.maxSeq, 1, 2 ** 31 - 1);
  checkInt(op, 'seq', shape.seq, 1, shape.maxSeq);
  checkInt(op, 'channels', shape.channels, 1, 2 ** 31 - 1);
  checkInt(op, 'vocab', shape.vocab, 1, 2 ** 31 - 1);
  checkInt(op, 'posOffset', posOffset, 0, shape.maxSeq - shape.seq);
  const tokens = shape.batch * shape.seq;
  if (tokens > EMBEDDING_MAX_TOKENS) {
    throw new OpInputError(
      op,
      'batch × seq',
      `must be at most ${EMBEDDING_MAX_TOKENS}, got ${shape.batch} × ${shape.seq} = ${tokens}`,
    );
  }
  // Flat indices (v·C + c, (b·T + t)·C + c) are u32 on the GPU.
  const largest = Math.max(shape.vocab, shape.maxSeq, tokens) * shape.channels;
  if (largest > U32_MAX) {
    throw new OpInputError(op, 'channels', `makes a tensor of ${largest} elements (max 2^32 − 1)`);
  }
}

/**
 * Rows rowStart … rowStart + rows − 1 of a (V, C) table: one part of a table split by rows because
 * the whole would not fit one GPU buffer binding (a large vocabulary). The GPU kernels take a part
 * and write the rows of x whose tokens it holds; the CPU keeps whole tables.
 */
export interface TableRows {
  rowStart: number;
  rows: number;
}

/** The part, checked to lie within the vocab's rows; the whole table without one. */
export function checkTableRows(op: string, vocab: number, part?: TableRows): TableRows {
  if (!part) return { rowStart: 0, rows: vocab };
  checkInt(op, 'part.rowStart', part.rowStart, 0, vocab - 1);
  checkInt(op, 'part.rows', part.rows, 1, vocab - part.rowStart);
  return part;
}

/** Every token id must be an integer in [0, vocab); the error names the first bad index. */
export function checkTokenIds(op: string, tokens: Ints, vocab: number, seq: number): void {
  for (let i = 0; i < tokens.length; i++) {
    const id = tokens[i]!;
    if (id < 0 || id >= vocab) {
      throw new OpInputError(
        op,
        'tokens',
        `must be ids in [0, ${vocab}) (vocab), but index ${i} (b ${Math.floor(i / seq)}, t ${i % seq}) is ${id}`,
      );
    }
  }
}

/** Shape, length and token-id checks of embeddingForward; shared with the GPU convenience path. */
export function checkEmbeddingForwardInput(
  tokens: Ints,
  wte: Floats,
  wpe: Floats | undefined,
  shape: EmbeddingShape,
  posOffset = 0,
): void {
  checkEmbeddingShape(OP_FORWARD, shape, posOffset);
  const { batch, seq, channels, vocab, maxSeq } = shape;
  checkLength(OP_FORWARD, 'tokens', tokens, batch * seq, 'batch × seq');
  checkLength(OP_FORWARD, 'wte', wte, vocab * channels, 'vocab × channels');
  if (wpe) checkLength(OP_FORWARD, 'wpe', wpe, maxSeq * channels, 'maxSeq × channels');
  checkTokenIds(OP_FORWARD, tokens, vocab, seq);
}

/** Shape, length and token-id checks of embeddingBackward; shared with the GPU convenience path. */
export function checkEmbeddingBackwardInput(
  dx: Floats,
  tokens: Ints,
  shape: EmbeddingShape,
  accumulateDwte?: Floats,
): void {
  checkEmbeddingShape(OP_BACKWARD, shape);
  const { batch, seq, channels, vocab } = shape;
  checkLength(OP_BACKWARD, 'dx', dx, batch * seq * channels, 'batch × seq × channels');
  checkLength(OP_BACKWARD, 'tokens', tokens, batch * seq, 'batch × seq');
  if (accumulateDwte) {
    checkLength(
      OP_BACKWARD,
      'accumulateDwte',
      accumulateDwte,
      vocab * channels,
      'vocab × channels',
    );
  }
  checkTokenIds(OP_BACKWARD, tokens, vocab, seq);
}

/**
 * x[b, t] = wte[tokens[b, t]] + wpe[posOffset + t]. tokens (B·T) Int32Array|Uint32Array; wte (V, C);
 * wpe (maxSeq, C) or undefined (no position term); posOffset + seq ≤ maxSeq (posOffset > 0 when
 * decoding past a cached prefix). A token id outside [0, V) → OpInputError naming index and range.
 * Returns x (B, T, C).
 */
export function embeddingForward<T extends Floats>(
  tokens: Ints,
  wte: T,
  wpe: T | undefined,
  shape: EmbeddingShape,
  posOffset = 0,
): T {
  checkEmbeddingForwardInput(tokens, wte, wpe, shape, posOffset);
  const { batch, seq, channels: C } = shape;
  const x = zerosLike(wte, batch * seq * C); // (B, T, C)
  for (let n = 0; n < batch * seq; n++) {
    const tokenRow = tokens[n]! * C;
    const posRow = (posOffset + (n % seq)) * C;
    if (wpe) for (let c = 0; c < C; c++) x[n * C + c] = wte[tokenRow + c]! + wpe[posRow + c]!;
    else for (let c = 0; c < C; c++) x[n * C + c] = wte[tokenRow + c]!;
  }
  return x;
}

/** Options of embeddingBackward; `wpe` decides whether there is a dwpe (see the overloads). */
export interface EmbeddingBackwardOptions<T extends Floats> {
  /** dwte starts from this (V, C) gradient instead of 0: tied embeddings. Not modified. */
  accumulateDwte?: T;
  /**
   * Whether the model has a wpe table (default true). false for rotary positions: no dwpe is
   * computed or returned, matching the GPU path, which records no wpe gradient without a dwpe
   * buffer.
   */
  wpe?: boolean;
}

/**
 * Gradients of embeddingForward with posOffset = 0 (training sees whole sequences).
 * dwte (V, C): row v = Σ over positions n with tokens[n] = v of dx[n] (in token order), plus
 * `accumulateDwte` if given — for tied embeddings, where the LM head already wrote its part of the
 * gradient of the shared matrix. dwpe (maxSeq, C): row t < seq = Σ_b dx[b, t]; rows ≥ seq are 0;
 * absent with `wpe: false` (the overloads type the result so a caller that said so has no dwpe to
 * read, and one that passes a boolean must check).
 */
export function embeddingBackward<T extends Floats>(
  dx: T,
  tokens: Ints,
  shape: EmbeddingShape,
  options: EmbeddingBackwardOptions<T> & { wpe: false },
): { dwte: T };
export function embeddingBackward<T extends Floats>(
  dx: T,
  tokens: Ints,
  shape: EmbeddingShape,
  options?: EmbeddingBackwardOptions<T> & { wpe?: true },
): { dwte: T; dwpe: T };
export function embeddingBackward<T extends Floats>(
  dx: T,
  tokens: Ints,
  shape: EmbeddingShape,
  options: EmbeddingBackwardOptions<T>,
): { dwte: T; dwpe?: T };
export function embeddingBackward<T extends Floats>(
  dx: T,
  tokens: Ints,
  shape: EmbeddingShape,
  options: EmbeddingBackwardOptions<T> = {},
): { dwte: T; dwpe?: T } {
  const { accumulateDwte, wpe = true } = options;
  checkEmbeddingBackwardInput(dx, tokens, shape, accumulateDwte);
  const { batch, seq, channels: C, vocab, maxSeq } = shape;

  const sumWte = new Float64Array(vocab * C); // (V, C)
  for (let n = 0; n < batch * seq; n++) {
    const tokenRow = tokens[n]! * C;
    for (let c = 0; c < C; c++) sumWte[tokenRow + c]! += dx[n * C + c]!;
  }
  const dwte = zerosLike(dx, vocab * C);
  for (let i = 0; i < vocab * C; i++) dwte[i] = sumWte[i]! + (accumulateDwte?.[i] ?? 0);
  if (!wpe) return { dwte };

  const sumWpe = new Float64Array(seq * C); // (T, C): rows t ≥ seq of dwpe stay 0
  for (let n = 0; n < batch * seq; n++) {
    const posRow = (n % seq) * C;
    for (let c = 0; c < C; c++) sumWpe[posRow + c]! += dx[n * C + c]!;
  }
  const dwpe = zerosLike(dx, maxSeq * C); // (maxSeq, C)
  dwpe.set(sumWpe);
  return { dwte, dwpe };
}
