/** Input checks shared by every op's CPU reference and GPU wrapper, so both reject the same input. */
import { OpInputError } from './errors';

type Numeric = Float32Array | Float64Array | Uint32Array | Int32Array;

/** `value` must be an integer in [min, max]. */
export function checkInt(op: string, field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new OpInputError(op, field, `must be an integer in [${min}, ${max}], got ${value}`);
  }
}

/** `data` must hold exactly rows × cols elements. */
export function checkMatrix(
  op: string,
  field: string,
  data: Numeric,
  rows: number,
  cols: number,
): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  if (data.length !== rows * cols) {
    throw new OpInputError(
      op,
      field,
      `must have rows × cols = ${rows} × ${cols} = ${rows * cols} elements, got ${data.length}`,
    );
  }
}

/** Every element must be finite; the error names the first bad index (and its row/col if given). */
export function checkFinite(op: string, field: string, data: Numeric, cols?: number): void {
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (!Number.isFinite(v)) {
      const where = cols ? ` (row ${Math.floor(i / cols)}, col ${i % cols})` : '';
      throw new OpInputError(op, field, `must be finite, but index ${i}${where} is ${v}`);
    }
  }
}

/** `data` must hold exactly `length` elements; `what` says where the length comes from. */
export function checkLength(
  op: string,
  field: string,
  data: Numeric,
  length: number,
  what: string,
): void {
  if (data.length !== length) {
    throw new OpInputError(op, field, `must have ${what} = ${length} elements, got ${data.length}`);
  }
}

/**
 * Which ends of a checkRange() interval are open (excluded). Two spellings are in use and both
 * are accepted: `{ min, max }` and `{ lowOpen, highOpen }`.
 */
export interface RangeEnds {
  min?: boolean;
  max?: boolean;
  lowOpen?: boolean;
  highOpen?: boolean;
}

/**
 * `value` must be a finite number in [min, max] (an end marked open is left out). The message
 * prints the range in interval notation, e.g. "must be in (0, ∞), got 0"; infinite ends always
 * print as open, since infinite values are rejected.
 */
export function checkRange(
  op: string,
  field: string,
  value: number,
  min: number,
  max: number,
  ends: RangeEnds = {},
): void {
  const lowOpen = ends.min ?? ends.lowOpen ?? false;
  const highOpen = ends.max ?? ends.highOpen ?? false;
  const aboveMin = lowOpen ? value > min : value >= min;
  const belowMax = highOpen ? value < max : value <= max;
  if (typeof value !== 'number' || !Number.isFinite(value) || !aboveMin || !belowMax) {
    const lo = min === -Infinity ? '(-∞' : `${lowOpen ? '(' : '['}${min}`;
    const hi = max === Infinity ? '∞)' : `${max}${highOpen ? ')' : ']'}`;
    throw new OpInputError(op, field, `must be in ${lo}, ${hi}, got ${value}`);
  }
}

/** `value` must be one of `allowed` (enum-like options, booleans). */
export function checkOneOf<T>(op: string, field: string, value: T, allowed: readonly T[]): void {
  if (!allowed.includes(value)) {
    const list = allowed.map((a) => (typeof a === 'string' ? `'${a}'` : String(a))).join(', ');
    const got = typeof value === 'string' ? `'${value}'` : String(value);
    throw new OpInputError(op, field, `must be one of ${list}, got ${got}`);
  }
}

/** Every element must be exactly 0 or 1 (masks, done flags); the error names the first bad index. */
export function checkBinary(op: string, field: string, data: Numeric, cols?: number): void {
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if (v !== 0 && v !== 1) {
      const where = cols ? ` (row ${Math.floor(i / cols)}, col ${i % cols})` : '';
      throw new OpInputError(op, field, `must be 0 or 1, but index ${i}${where} is ${v}`);
    }
  }
}

/** Alias of checkBinary (both names are in use): a 0/1 mask. */
export const checkMask = checkBinary;
