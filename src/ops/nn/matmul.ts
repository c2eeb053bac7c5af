/**
 * Matrix product and column sums: the two primitives of every linear layer (forward y = x·Wᵀ + b,
 * backward dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy). Row-major everywhere. CPU twin of
 * kernels/nn/matmul.wgsl and kernels/nn/column_sums.wgsl.
 *
 * Sums run in float64 (JS numbers) and are rounded once into the output precision, so the
 * Float32Array result is the correctly rounded product up to float64 error: the GPU's f32
 * accumulation is compared against it with a tolerance that grows with k.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength, checkOneOf } from '../validate';
import { type Floats, zerosLike } from './floats';

/** Largest m, k or n (2^20); the element counts must also fit one array / storage binding. */
export const MATMUL_MAX_DIM = 2 ** 20;

export interface MatmulShape {
  /** Rows of op(A) and of the output. */
  m: number;
  /** Inner dimension: columns of op(A), rows of op(B). */
  k: number;
  /** Columns of op(B) and of the output. */
  n: number;
  /** A is stored (k, m) and used transposed. Default false: A is stored (m, k). */
  transA?: boolean;
  /** B is stored (n, k) and used transposed (PyTorch's weight layout). Default false: (k, n). */
  transB?: boolean;
}

export interface MatmulOptions<T extends Floats> {
  /** (n): added to every output row. */
  bias?: T;
  /** (m, n): added to the result (gradient accumulation). Not modified. */
  accumulate?: T;
}

/** The checks matmul() and the GPU wrappers share: integer sizes, flags, array lengths. */
export function checkMatmulInput(
  a: Floats,
  b: Floats,
  shape: MatmulShape,
  options: { bias?: Floats; accumulate?: Floats } = {},
  op = 'matmul',
): void {
  checkMatmulShape(shape, op);
  const { m, k, n } = shape;
  checkLength(op, 'a', a, m * k, shape.transA ? 'k × m' : 'm × k');
  checkLength(op, 'b', b, k * n, shape.transB ? 'n × k' : 'k × n');
  if (options.bias) checkLength(op, 'bias', options.bias, n, 'n');
  if (options.accumulate) checkLength(op, 'accumulate', options.accumulate, m * n, 'm × n');
}

/** Sizes and flags only (the GPU encode functions have no arrays to check). */
export function checkMatmulShape(shape: MatmulShape, op = 'matmul'): void {
  checkInt(op, 'm', shape.m, 1, MATMUL_MAX_DIM);
  checkInt(op, 'k', shape.k, 1, MATMUL_MAX_DIM);
  checkInt(op, 'n', shape.n, 1, MATMUL_MAX_DIM);
  checkOneOf(op, 'transA', shape.transA, [undefined, false, true]);
  checkOneOf(op, 'transB', shape.transB, [undefined, false, true]);
  for (const [field, count] of [
    ['m × k', shape.m * shape.k],
    ['k × n', shape.k * shape.n],
    ['m × n', shape.m * shape.n],
  ] as const) {
    if (count > 2 ** 31 - 1) {
      throw new OpInputError(op, field, `must be at most 2^31 − 1 elements, got ${count}`);
    }
  }
}

/**
 * out (m×n) = op(A)·op(B) [+ bias broadcast over rows] [+ accumulate]. op(A) is m×k: A is stored
 * (m×k), or (k×m) when transA. op(B) is k×n: B is stored (k×n), or (n×k) when transB.
 */
export function matmul<T extends Floats>(
  a: T,
  b: T,
  shape: MatmulShape,
  options: MatmulOptions<T> = {},
): T {
  checkMatmulInput(a, b, shape, options);
  const { m, k, n } = shape;
  const transA = shape.transA ?? false;
  const transB = shape.transB ?? false;
  // op(A)[i, p] = a[i·sAi + p·sAp]; op(B)[p, j] = b[p·sBp + j·sBj].
  const sAi = transA ? 1 : k;
  const sAp = transA ? m : 1;
  const sBp = transB ? 1 : n;
  const sBj = transB ? k : 1;
  const out = zerosLike(a, m * n);
  const acc = new Float64Array(n); // one output row, float64
  for (let i = 0; i < m; i++) {
    acc.fill(0);
    if (transB) {
      // Rows of B are contiguous along p: one dot product per output element.
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let p = 0; p < k; p++) sum += a[i * sAi + p * sAp]! * b[j * sBj + p]!;
        acc[j] = sum;
      }
    } else {
      // Rows of B are contiguous along j: add a_ip · B[p, :] into the row (streams B row-wise).
      for (let p = 0; p < k; p++) {
        const aip = a[i * sAi + p * sAp]!;
        const row = p * sBp;
        for (let j = 0; j < n; j++) acc[j] = acc[j]! + aip * b[row + j]!;
      }
    }
    for (let j = 0; j < n; j++) {
      let v = acc[j]!;
      if (options.bias) v += options.bias[j]!;
      if (options.accumulate) v += options.accumulate[i * n + j]!;
      out[i * n + j] = v;
    }
  }
  return out;
}

/** Sizes only (the GPU encode function has no arrays to check). cols ≤ 2^20 like matmul's n. */
export function checkColumnSumsShape(rows: number, cols: number): void {
  checkInt('columnSums', 'rows', rows, 1, 2 ** 31 - 1);
  checkInt('columnSums', 'cols', cols, 1, MATMUL_MAX_DIM);
  if (rows * cols > 2 ** 31 - 1) {
    throw new OpInputError(
      'columnSums',
      'rows × cols',
      `must be at most 2^31 − 1 elements, got ${rows * cols}`,
    );
  }
}

/** The checks columnSums() and its GPU wrapper share. */
export function checkColumnSumsInput(
  x: Floats,
  rows: number,
  cols: number,
  accumulate?: Floats,
): void {
  checkColumnSumsShape(rows, cols);
  checkLength('columnSums', 'x', x, rows * cols, `rows × cols = ${rows} × ${cols}`);
  if (accumulate) checkLength('columnSums', 'accumulate', accumulate, cols, 'cols');
}

/** out[c] = Σ_r x[r, c] (+ accumulate[c]); x: (rows, cols). Bias gradients. */
export function columnSums<T extends Floats>(x: T, rows: number, cols: number, accumulate?: T): T {
  checkColumnSumsInput(x, rows, cols, accumulate);
  const sums = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    const base = r * cols;
    for (let c = 0; c < cols; c++) sums[c] = sums[c]! + x[base + c]!;
  }
  const out = zerosLike(x, cols);
  for (let c = 0; c < cols; c++) out[c] = sums[c]! + (accumulate ? accumulate[c]! : 0);
  return out;
}
