/**
 * Rotary position embeddings (RoPE) in the Hugging Face "rotate_half" (GPT-NeoX) convention, the
 * one Llama-style checkpoints (SmolLM2, Qwen2.5) are trained with. CPU twin of
 * kernels/nn/rotary.wgsl (src/gpu/kernels/nn/rotary.ts).
 *
 * Shapes: B = batch, T = seq, C = channels, NH = heads, hs = C / NH (even), half = hs / 2.
 *   qkv: (B, T, 3C), the attention input (the layout of src/ops/nn/attention.ts): row r = b·T + t
 *        is [q (C) | k (C) | v (C)], head h uses channels h·hs … (h+1)·hs − 1 of each part, and
 *        row r sits at position p = posOffset + t.
 *   inv_freq[i]  = base^(−2i / hs)                   i in [0, half), float64
 *   angle[p, i]  = p · inv_freq[i]                   cos, sin: (positions, half)
 *   x'[i]        = x[i]        · cos − x[i + half] · sin
 *   x'[i + half] = x[i + half] · cos + x[i]        · sin      for x = q and k of every head; v as is
 * The rotation is orthogonal, so the backward (its transpose) is the same with sin negated.
 *
 * Arithmetic runs in JS numbers (float64) for both precisions; outputs take the input's precision.
 */
import { OpInputError } from '../errors';
import { checkInt, checkRange } from '../validate';
import { type Floats, zerosLike } from './floats';

export interface RotaryShape {
  /** B, ≥ 1. */
  batch: number;
  /** T, the positions per row, 1 … table.positions − posOffset. */
  seq: number;
  /** NH, attention heads, ≥ 1. */
  heads: number;
  /** C, the model width: a multiple of `heads` with an even head size hs = C / NH. */
  channels: number;
}

/** cos and sin of every (position, frequency) angle; cos, sin: (positions, half) row-major. */
export interface RotaryTable {
  positions: number;
  half: number;
  cos: Float64Array;
  sin: Float64Array;
}

/** Most positions of a table (2^16: far past the lab's contexts, and tables stay ≤ 64 MiB). */
export const ROTARY_MAX_POSITIONS = 2 ** 16;
/** Largest head size (the attention kernels' limit is 256; real Llama-style heads are 64–128). */
export const ROTARY_MAX_HEAD_SIZE = 1024;
/** Largest qkv: flat indices are u32 on the GPU, kept below 2^31 like the other nn ops. */
const MAX_ELEMENTS = 2 ** 31 - 1;

const OP_TABLE = 'rotaryTable';
const OP_FORWARD = 'rotaryForward';
const OP_BACKWARD = 'rotaryBackward';

/**
 * The cos/sin table of positions 0 … positions − 1 for heads of `headSize` channels. `base` is
 * the checkpoint's rope_theta (10,000 in the RoPE paper and GPT-NeoX, 100,000 in SmolLM2,
 * 1,000,000 in Qwen2.5).
 */
export function rotaryTable(positions: number, headSize: number, base: number): RotaryTable {
  checkInt(OP_TABLE, 'positions', positions, 1, ROTARY_MAX_POSITIONS);
  checkEvenHeadSize(OP_TABLE, 'headSize', headSize);
  checkRange(OP_TABLE, 'base', base, 1, Infinity, { lowOpen: true });
  const half = headSize / 2;
  const invFreq = Float64Array.from({ length: half }, (_, i) => base ** ((-2 * i) / headSize));
  const cos = new Float64Array(positions * half);
  const sin = new Float64Array(positions * half);
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * invFreq[i]!;
      cos[p * half + i] = Math.cos(angle);
      sin[p * half + i] = Math.sin(angle);
    }
  }
  return { positions, half, cos, sin };
}

function checkEvenHeadSize(op: string, field: string, headSize: number): void {
  checkInt(op, field, headSize, 2, ROTARY_MAX_HEAD_SIZE);
  if (headSize % 2 !== 0) {
    throw new OpInputError(op, field, `must be even (rotation pairs i, i + hs/2), got ${headSize}`);
  }
}

/**
 * Shape checks against a table of `positions` rows of `half` frequencies, shared by the CPU op
 * and the GPU wrapper (which holds only the uploaded table, not its Float64 arrays). Returns the
 * element count of qkv, B·T·3C.
 */
export function checkRotaryShape(
  op: string,
  shape: RotaryShape,
  half: number,
  positions: number,
  posOffset: number,
): number {
  checkInt(op, 'positions', positions, 1, ROTARY_MAX_POSITIONS);
  checkInt(op, 'half', half, 1, ROTARY_MAX_HEAD_SIZE / 2);
  checkInt(op, 'batch', shape.batch, 1, MAX_ELEMENTS);
  checkInt(op, 'seq', shape.seq, 1, positions);
  checkInt(op, 'heads', shape.heads, 1, MAX_ELEMENTS);
  checkInt(op, 'channels', shape.channels, 1, MAX_ELEMENTS);
  if (shape.channels % shape.heads !== 0) {
    throw new OpInputError(
      op,
      'channels',
      `must be a multiple of heads (${shape.heads}), got ${shape.channels}`,
    );
  }
  const headSize = shape.channels / shape.heads;
  checkEvenHeadSize(op, 'channels / heads (head size)', headSize);
  if (half !== headSize / 2) {
    throw new OpInputError(
      op,
      'table.half',
      `must be head size / 2 = ${shape.channels} / ${shape.heads} / 2 = ${headSize / 2}, got ${half}`,
    );
  }
  const lastOffset = positions - shape.seq;
  if (!Number.isInteger(posOffset) || posOffset < 0 || posOffset > lastOffset) {
    throw new OpInputError(
      op,
      'posOffset',
      `must be an integer in [0, ${lastOffset}] (posOffset + seq ${shape.seq} ≤ table.positions ` +
        `${positions}), got ${posOffset}`,
    );
  }
  const elements = shape.batch * shape.seq * 3 * shape.channels;
  if (elements > MAX_ELEMENTS) {
    throw new OpInputError(
      op,
      'batch × seq × 3·channels',
      `must be at most ${MAX_ELEMENTS}, got ${shape.batch} × ${shape.seq} × ${3 * shape.channels} = ${elements}`,
    );
  }
  return elements;
}

/** The checks rotaryForward/Backward and their GPU convenience paths share. */
export function checkRotaryInput(
  op: string,
  qkvLength: number,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset: number,
): void {
  const elements = checkRotaryShape(op, shape, table.half, table.positions, posOffset);
  const tableLength = table.positions * table.half;
  for (const field of ['cos', 'sin'] as const) {
    if (table[field].length !== tableLength) {
      throw new OpInputError(
        op,
        `table.${field}`,
        `must have positions × half = ${table.positions} × ${table.half} = ${tableLength} elements, got ${table[field].length}`,
      );
    }
  }
  if (qkvLength !== elements) {
    throw new OpInputError(
      op,
      'qkv',
      `must have B·T·3C = ${shape.batch}·${shape.seq}·${3 * shape.channels} = ${elements} elements, got ${qkvLength}`,
    );
  }
}

/** qkv with q and k of every head rotated to their positions; a new array, v copied. */
export function rotaryForward<T extends Floats>(
  qkv: T,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset = 0,
): T {
  return rotate(OP_FORWARD, qkv, table, shape, posOffset, 1);
}

/**
 * The backward: dq and dk rotated by −angle (the transpose of the forward rotation); a new array,
 * dv copied. dqkv: (B, T, 3C).
 */
export function rotaryBackward<T extends Floats>(
  dqkv: T,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset = 0,
): T {
  return rotate(OP_BACKWARD, dqkv, table, shape, posOffset, -1);
}

/** The one implementation of both directions: sin · direction, so they cannot drift apart. */
function rotate<T extends Floats>(
  op: string,
  x: T,
  table: RotaryTable,
  shape: RotaryShape,
  posOffset: number,
  direction: 1 | -1,
): T {
  checkRotaryInput(op, x.length, table, shape, posOffset);
  const { seq: T, heads: NH, channels: C } = shape;
  const half = table.half;
  const hs = 2 * half;
  const width = 3 * C;
  const rows = shape.batch * T;
  const out = zerosLike(x, x.length);
  out.set(x); // v (and anything not rotated below) as is
  for (let r = 0; r < rows; r++) {
    const angles = (posOffset + (r % T)) * half;
    for (let part = 0; part < 2 * C; part += C) {
      for (let h = 0; h < NH; h++) {
        const lo = r * width + part + h * hs;
        for (let i = 0; i < half; i++) {
          const c = table.cos[angles + i]!;
          const s = direction * table.sin[angles + i]!;
          const a = x[lo + i]!;
          const b = x[lo + i + half]!;
          out[lo + i] = a * c - b * s;
          out[lo + i + half] = b * c + a * s;
        }
      }
    }
  }
  return out;
}
