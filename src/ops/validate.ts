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
