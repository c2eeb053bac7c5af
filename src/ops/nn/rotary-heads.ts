/**
 * Rotary positions (rotate-half, as src/ops/nn/rotary.ts defines them, with its rotaryTable) on a
 * tensor of heads standing alone, one position per row: Hugging Face's apply_rotary_pos_emb on q
 * (NH heads) and k (NKV heads) of grouped-query attention, which come from separate projections
 * and so do not fit rotary.ts's fused (B, T, 3C) layout.
 *
 *   x: (rows, H·hs)   positions: (rows) ints, row r at position positions[r] < table.positions
 *   half = hs/2;  for every head and i < half, with c = cos[p, i], s = sin[p, i]:
 *   x'[i] = x[i]·c − x[i + half]·s,   x'[i + half] = x[i + half]·c + x[i]·s
 * Per-row positions let one call serve a prefill (positions 0 … T − 1 per sequence) and a batched
 * decoding step whose sequences sit at different positions. The rotation is orthogonal, so the
 * backward is the same with sin negated.
 *
 * Arithmetic runs in JS numbers (float64); outputs take the input's precision.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength } from '../validate';
import { type Floats, type Ints, zerosLike } from './floats';
import { ROTARY_MAX_HEAD_SIZE, type RotaryTable } from './rotary';

export interface RotaryHeadsShape {
  /** Rows (B·T tokens), ≥ 1. */
  rows: number;
  /** Heads per row, ≥ 1. */
  heads: number;
  /** hs, even, 2 … 1024; must equal 2 · table.half. */
  headSize: number;
}

const OP_FORWARD = 'rotaryHeadsForward';
const OP_BACKWARD = 'rotaryHeadsBackward';

/**
 * Shape checks against a table of `half` frequencies per position, shared with the GPU wrapper
 * (which holds only the uploaded table and positions). Returns rows × heads × headSize.
 */
export function checkRotaryHeadsShape(op: string, shape: RotaryHeadsShape, half: number): number {
  checkInt(op, 'rows', shape.rows, 1, 2 ** 31 - 1);
  checkInt(op, 'heads', shape.heads, 1, 2 ** 31 - 1);
  checkInt(op, 'headSize', shape.headSize, 2, ROTARY_MAX_HEAD_SIZE);
  if (shape.headSize % 2 !== 0) {
    throw new OpInputError(
      op,
      'headSize',
      `must be even (rotation pairs i, i + hs/2), got ${shape.headSize}`,
    );
  }
  if (half !== shape.headSize / 2) {
    throw new OpInputError(
      op,
      'table.half',
      `must be headSize / 2 = ${shape.headSize / 2}, got ${half}`,
    );
  }
  const elements = shape.rows * shape.heads * shape.headSize;
  if (elements > 2 ** 31 - 1) {
    throw new OpInputError(op, 'rows', `makes a tensor of ${elements} elements (max 2^31 − 1)`);
  }
  return elements;
}

/** Every check of both directions (shared with a GPU wrapper's convenience path). */
export function checkRotaryHeadsInput(
  op: string,
  x: Floats,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
): void {
  const elements = checkRotaryHeadsShape(op, shape, table.half);
  checkLength(op, 'x', x, elements, 'rows × heads × headSize');
  checkLength(op, 'positions', positions, shape.rows, 'rows');
  const tableLength = table.positions * table.half;
  if (table.cos.length !== tableLength || table.sin.length !== tableLength) {
    throw new OpInputError(
      op,
      'table',
      `must hold positions × half = ${tableLength} cos and sin values, got ${table.cos.length} and ${table.sin.length}`,
    );
  }
  for (let r = 0; r < shape.rows; r++) {
    const p = positions[r]!;
    if (!Number.isInteger(p) || p < 0 || p >= table.positions) {
      throw new OpInputError(
        op,
        'positions',
        `must be integers in [0, ${table.positions - 1}] (the table's positions), but row ${r} is ${p}`,
      );
    }
  }
}

/** x with every head of row r rotated to position positions[r]; a new array. */
export function rotaryHeadsForward<T extends Floats>(
  x: T,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
): T {
  checkRotaryHeadsInput(OP_FORWARD, x, positions, table, shape);
  return rotateHeads(x, positions, table, shape, 1);
}

/** The backward: each head of dx rotated by −angle (the forward's transpose); a new array. */
export function rotaryHeadsBackward<T extends Floats>(
  dx: T,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
): T {
  checkRotaryHeadsInput(OP_BACKWARD, dx, positions, table, shape);
  return rotateHeads(dx, positions, table, shape, -1);
}

function rotateHeads<T extends Floats>(
  x: T,
  positions: Ints,
  table: RotaryTable,
  shape: RotaryHeadsShape,
  direction: 1 | -1,
): T {
  const { rows, heads, headSize: hs } = shape;
  const half = table.half;
  const out = zerosLike(x, x.length);
  for (let r = 0; r < rows; r++) {
    const angles = positions[r]! * half;
    for (let h = 0; h < heads; h++) {
      const lo = (r * heads + h) * hs;
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
  return out;
}
