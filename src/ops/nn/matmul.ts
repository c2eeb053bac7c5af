/**
 * Matrix product and column sums: the two primitives of every linear layer (forward y = x·Wᵀ + b,
 * backward dx = dy·W, dW = dyᵀ·x, db = Σ_rows dy). Row-major everywhere. CPU twin of
 * kernels/nn/matmul.wgsl and kernels/nn/matmul_column_sums.wgsl.
 *
 * Sums run in float64 (JS numbers) and are rounded once into the output precision, so the
 * Float32Array result is the correctly rounded product up to float64 error: the GPU's f32
 * accumulation is compared against it with a tolerance that grows with k.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength, checkOneOf } from '../validate';
import { type Floats, zerosLike } from './floats';
import { matmulSimd, simdKernel } from './matmul-simd';

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
 *
 * Every output element is one float64 sum over p = 0…k−1 in order, then + bias, + accumulate,
 * then one rounding: the result does not depend on the blocking or on the path taken (the
 * WebAssembly SIMD kernel of matmul-simd.ts where the platform has it, else the loops below),
 * only on the inputs.
 */
export function matmul<T extends Floats>(
  a: T,
  b: T,
  shape: MatmulShape,
  options: MatmulOptions<T> = {},
): T {
  checkMatmulInput(a, b, shape, options);
  const kernel = simdKernel();
  if (kernel) {
    const out = zerosLike(a, shape.m * shape.n);
    if (matmulSimd(kernel, a, b, shape, stridesOf(shape), options, out)) return out;
  }
  return matmulLoops(a, b, shape, options);
}

/** Element strides of op(A) and op(B) in their stored arrays. */
export interface Strides {
  aRow: number;
  aInner: number;
  bInner: number;
  bCol: number;
}

/** op(A)[i, p] = a[i·aRow + p·aInner]; op(B)[p, j] = b[p·bInner + j·bCol]. */
function stridesOf(shape: MatmulShape): Strides {
  return {
    aRow: shape.transA ? 1 : shape.k,
    aInner: shape.transA ? shape.m : 1,
    bInner: shape.transB ? 1 : shape.n,
    bCol: shape.transB ? shape.k : 1,
  };
}

/**
 * matmul() in plain JavaScript: the specification the SIMD kernel is tested against, and the path
 * where WebAssembly SIMD is missing. Inputs are not checked here (matmul() checks them).
 */
export function matmulLoops<T extends Floats>(
  a: T,
  b: T,
  shape: MatmulShape,
  options: MatmulOptions<T> = {},
): T {
  const { m, k, n } = shape;
  const out = zerosLike(a, m * n);
  const strides = stridesOf(shape);
  const evenRows = m - (m % 2);
  const colsBy4 = n - (n % 4);
  // Without WebAssembly SIMD the CPU fallback trains on this loop: 2 rows × 4 columns of
  // the output per pass over p, eight float64 sums held in registers, so that each loaded
  // element of A serves four products and each element of B two.
  for (let i = 0; i < evenRows; i += 2) {
    for (let j = 0; j < colsBy4; j += 4) block2x4(a, b, out, i, j, k, n, strides, options);
    for (let j = colsBy4; j < n; j++) {
      out[i * n + j] = finish(dot(a, b, i, j, k, strides), i, j, n, options);
      out[(i + 1) * n + j] = finish(dot(a, b, i + 1, j, k, strides), i + 1, j, n, options);
    }
  }
  for (let i = evenRows; i < m; i++) {
    for (let j = 0; j < n; j++)
      out[i * n + j] = finish(dot(a, b, i, j, k, strides), i, j, n, options);
  }
  return out;
}

/** One output element: Σ_p op(A)[i, p] · op(B)[p, j] in float64, p in order. */
function dot(a: Floats, b: Floats, i: number, j: number, k: number, s: Strides): number {
  let sum = 0;
  let ai = i * s.aRow;
  let bi = j * s.bCol;
  for (let p = 0; p < k; p++) {
    sum += a[ai]! * b[bi]!;
    ai += s.aInner;
    bi += s.bInner;
  }
  return sum;
}

/** Output rows i, i+1 × columns j…j+3, each sum in the same order as dot(). */
function block2x4<T extends Floats>(
  a: T,
  b: T,
  out: T,
  i: number,
  j: number,
  k: number,
  n: number,
  s: Strides,
  options: MatmulOptions<T>,
): void {
  const { aRow, aInner, bInner, bCol } = s;
  let r00 = 0, r01 = 0, r02 = 0, r03 = 0; // prettier-ignore
  let r10 = 0, r11 = 0, r12 = 0, r13 = 0; // prettier-ignore
  let ai = i * aRow;
  let bi = j * bCol;
  for (let p = 0; p < k; p++) {
    const a0 = a[ai]!;
    const a1 = a[ai + aRow]!;
    const b0 = b[bi]!;
    const b1 = b[bi + bCol]!;
    const b2 = b[bi + 2 * bCol]!;
    const b3 = b[bi + 3 * bCol]!;
    r00 += a0 * b0;
    r01 += a0 * b1;
    r02 += a0 * b2;
    r03 += a0 * b3;
    r10 += a1 * b0;
    r11 += a1 * b1;
    r12 += a1 * b2;
    r13 += a1 * b3;
    ai += aInner;
    bi += bInner;
  }
  const row0 = i * n + j;
  const row1 = row0 + n;
  out[row0] = finish(r00, i, j, n, options);
  out[row0 + 1] = finish(r01, i, j + 1, n, options);
  out[row0 + 2] = finish(r02, i, j + 2, n, options);
  out[row0 + 3] = finish(r03, i, j + 3, n, options);
  out[row1] = finish(r10, i + 1, j, n, options);
  out[row1 + 1] = finish(r11, i + 1, j + 1, n, options);
  out[row1 + 2] = finish(r12, i + 1, j + 2, n, options);
  out[row1 + 3] = finish(r13, i + 1, j + 3, n, options);
}

/** sum + bias[j] + accumulate[i, j], still in float64 (the caller's store rounds once). */
function finish(
  sum: number,
  i: number,
  j: number,
  n: number,
  options: MatmulOptions<Floats>,
): number {
  let v = sum;
  if (options.bias) v += options.bias[j]!;
  if (options.accumulate) v += options.accumulate[i * n + j]!;
  return v;
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
