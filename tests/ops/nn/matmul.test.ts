import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { columnSums, matmul, matmulLoops, type MatmulShape } from '../../../src/ops/nn/matmul';
import { randomF64 } from '../../support/gradcheck';

/** Explicit transpose of a (rows, cols) row-major matrix → (cols, rows). */
function transpose(x: Float64Array, rows: number, cols: number): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols; c++) out[c * rows + r] = x[r * cols + c]!;
  return out;
}

// The hand-worked case, m = 2, k = 3, n = 2:
//   A = [[1, 2, 3],      B = [[ 7,  8],
//        [4, 5, 6]]           [ 9, 10],
//                             [11, 12]]
//   A·B = [[1·7 + 2·9 + 3·11, 1·8 + 2·10 + 3·12],   = [[ 58,  64],
//          [4·7 + 5·9 + 6·11, 4·8 + 5·10 + 6·12]]      [139, 154]]
// Stored transposed: Aᵀ (3×2) = [[1, 4], [2, 5], [3, 6]], Bᵀ (2×3) = [[7, 9, 11], [8, 10, 12]].
const A = [1, 2, 3, 4, 5, 6];
const A_T = [1, 4, 2, 5, 3, 6];
const B = [7, 8, 9, 10, 11, 12];
const B_T = [7, 9, 11, 8, 10, 12];
const AB = [58, 64, 139, 154];

describe('matmul (CPU reference)', () => {
  it.each([
    ['A·B', A, B, false, false],
    ['transA: A stored (k×m)', A_T, B, true, false],
    ['transB: B stored (n×k)', A, B_T, false, true],
    ['transA and transB', A_T, B_T, true, true],
  ] as const)('matches the hand-worked 2×3 · 3×2 product: %s', (_, a, b, transA, transB) => {
    const shape: MatmulShape = { m: 2, k: 3, n: 2, transA, transB };
    expect(Array.from(matmul(new Float32Array(a), new Float32Array(b), shape))).toEqual(AB);
    expect(Array.from(matmul(new Float64Array(a), new Float64Array(b), shape))).toEqual(AB);
  });

  it('adds a bias to every row, then accumulates', () => {
    const shape = { m: 2, k: 3, n: 2 };
    const a = new Float64Array(A);
    const b = new Float64Array(B);
    // bias [0.5, −1]: [[58.5, 63], [139.5, 153]].
    const bias = new Float64Array([0.5, -1]);
    expect(Array.from(matmul(a, b, shape, { bias }))).toEqual([58.5, 63, 139.5, 153]);
    // + accumulate [[1, 2], [3, 4]]: [[59.5, 65], [142.5, 157]].
    const accumulate = new Float64Array([1, 2, 3, 4]);
    expect(Array.from(matmul(a, b, shape, { bias, accumulate }))).toEqual([59.5, 65, 142.5, 157]);
    expect(Array.from(accumulate)).toEqual([1, 2, 3, 4]); // not modified
    // accumulate alone: [[59, 66], [142, 158]].
    expect(Array.from(matmul(a, b, shape, { accumulate }))).toEqual([59, 66, 142, 158]);
  });

  it('returns the precision of its inputs', () => {
    const shape = { m: 1, k: 1, n: 1 };
    expect(matmul(new Float32Array([2]), new Float32Array([3]), shape)).toBeInstanceOf(
      Float32Array,
    );
    expect(matmul(new Float64Array([2]), new Float64Array([3]), shape)).toBeInstanceOf(
      Float64Array,
    );
  });

  it('rounds a float64 sum once into float32', () => {
    // 1 + 2^-24 + 2^-24 in float64 is 1 + 2^-23, exactly representable in float32; a float32
    // running sum would round 1 + 2^-24 back to 1 twice and return 1.
    const out = matmul(new Float32Array([1, 2 ** -24, 2 ** -24]), new Float32Array([1, 1, 1]), {
      m: 1,
      k: 3,
      n: 1,
    });
    expect(out[0]).toBe(1 + 2 ** -23);
  });

  it.each([
    ['matmul (the SIMD kernel where WebAssembly has it)', matmul],
    ['matmulLoops (JavaScript)', matmulLoops],
  ])(
    'property: every output of %s equals its float64 sum taken in order, at every tail of the blocks',
    (_, product) => {
      // m and n up to 11 cover odd row counts and 1–3 leftover columns of the 2×4 and 4×4 tiles;
      // the sums are written out here as a plain triple loop, so any blocking must give the same bits.
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 11 }),
          fc.integer({ min: 1, max: 9 }),
          fc.integer({ min: 1, max: 11 }),
          fc.boolean(),
          fc.boolean(),
          fc.integer({ min: 0, max: 2 ** 31 - 1 }),
          (m, k, n, transA, transB, seed) => {
            const a = new Float32Array(randomF64(m * k, 2, seed));
            const b = new Float32Array(randomF64(k * n, 2, seed + 1));
            const bias = new Float32Array(randomF64(n, 1, seed + 2));
            const accumulate = new Float32Array(randomF64(m * n, 1, seed + 3));
            const expected = new Float32Array(m * n);
            for (let i = 0; i < m; i++) {
              for (let j = 0; j < n; j++) {
                let sum = 0;
                for (let p = 0; p < k; p++) {
                  const aip = transA ? a[p * m + i]! : a[i * k + p]!;
                  const bpj = transB ? b[j * k + p]! : b[p * n + j]!;
                  sum += aip * bpj;
                }
                expected[i * n + j] = sum + bias[j]! + accumulate[i * n + j]!;
              }
            }
            const shape = { m, k, n, transA, transB };
            expect(product(a, b, shape, { bias, accumulate })).toEqual(expected);
          },
        ),
        { numRuns: 200 },
      );
    },
  );

  it('property: transB / transA equal the product with an explicitly transposed operand', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (m, k, n, seed) => {
          const a = randomF64(m * k, 2, seed); // (m, k)
          const b = randomF64(k * n, 2, seed + 1); // (k, n)
          const plain = matmul(a, b, { m, k, n });
          // Same products summed in the same order: bit-identical.
          expect(matmul(a, transpose(b, k, n), { m, k, n, transB: true })).toEqual(plain);
          expect(matmul(transpose(a, m, k), b, { m, k, n, transA: true })).toEqual(plain);
          const both = { m, k, n, transA: true, transB: true };
          expect(matmul(transpose(a, m, k), transpose(b, k, n), both)).toEqual(plain);
          // (A·B)ᵀ = Bᵀ·Aᵀ.
          const swapped = matmul(b, a, { m: n, k, n: m, transA: true, transB: true });
          expect(swapped).toEqual(transpose(plain, m, n));
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    [
      'm = 0',
      () => matmul(new Float32Array(1), new Float32Array(1), { m: 0, k: 1, n: 1 }),
      /m must be an integer in \[1, 1048576\], got 0/,
    ],
    [
      'k fractional',
      () => matmul(new Float32Array(1), new Float32Array(1), { m: 1, k: 1.5, n: 1 }),
      /k must be an integer/,
    ],
    [
      'n too large',
      () => matmul(new Float32Array(1), new Float32Array(1), { m: 1, k: 1, n: 2 ** 21 }),
      /n must be an integer in \[1, 1048576\]/,
    ],
    [
      'a length',
      () => matmul(new Float32Array(5), new Float32Array(6), { m: 2, k: 3, n: 2 }),
      /a must have m × k = 6 elements, got 5/,
    ],
    [
      'a length (transA)',
      () => matmul(new Float32Array(5), new Float32Array(6), { m: 2, k: 3, n: 2, transA: true }),
      /a must have k × m = 6 elements, got 5/,
    ],
    [
      'b length (transB)',
      () => matmul(new Float32Array(6), new Float32Array(7), { m: 2, k: 3, n: 2, transB: true }),
      /b must have n × k = 6 elements, got 7/,
    ],
    [
      'bias length',
      () =>
        matmul(
          new Float32Array(6),
          new Float32Array(6),
          { m: 2, k: 3, n: 2 },
          { bias: new Float32Array(3) },
        ),
      /bias must have n = 2 elements, got 3/,
    ],
    [
      'accumulate length',
      () =>
        matmul(
          new Float32Array(6),
          new Float32Array(6),
          { m: 2, k: 3, n: 2 },
          { accumulate: new Float32Array(2) },
        ),
      /accumulate must have m × n = 4 elements, got 2/,
    ],
    [
      'transA not a boolean',
      () =>
        matmul(new Float32Array(1), new Float32Array(1), {
          m: 1,
          k: 1,
          n: 1,
          transA: 1 as unknown as boolean,
        }),
      /transA must be one of undefined, false, true, got 1/,
    ],
    [
      'too many elements',
      () => matmul(new Float32Array(1), new Float32Array(1), { m: 2 ** 20, k: 2 ** 20, n: 1 }),
      /m × k must be at most 2\^31 − 1 elements/,
    ],
  ])('rejects bad input: %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});

describe('columnSums (CPU reference)', () => {
  it('matches hand-worked sums', () => {
    // x = [[1, 2, 3], [4, 5, 6]] → [1 + 4, 2 + 5, 3 + 6] = [5, 7, 9]; + accumulate 1 → [6, 8, 10].
    const x = new Float64Array([1, 2, 3, 4, 5, 6]);
    expect(Array.from(columnSums(x, 2, 3))).toEqual([5, 7, 9]);
    expect(Array.from(columnSums(x, 2, 3, new Float64Array([1, 1, 1])))).toEqual([6, 8, 10]);
    // One column: the sum of the rows; one row: the row itself.
    expect(Array.from(columnSums(x, 6, 1))).toEqual([21]);
    expect(Array.from(columnSums(new Float32Array(x), 1, 6))).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('property: equals 1ᵀ·x as a matmul', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const x = randomF64(rows * cols, 3, seed);
          const ones = new Float64Array(rows).fill(1);
          const viaMatmul = matmul(ones, x, { m: 1, k: rows, n: cols });
          expect(columnSums(x, rows, cols)).toEqual(viaMatmul);
        },
      ),
      { numRuns: 100 },
    );
  });

  it.each([
    ['rows = 0', () => columnSums(new Float32Array(2), 0, 2), /rows must be an integer in \[1, /],
    ['cols fractional', () => columnSums(new Float32Array(2), 1, 0.5), /cols must be an integer/],
    [
      'cols too large',
      () => columnSums(new Float32Array(2), 1, 2 ** 21),
      /cols must be an integer in \[1, 1048576\]/,
    ],
    [
      'x length',
      () => columnSums(new Float32Array(5), 2, 3),
      /x must have rows × cols = 2 × 3 = 6 elements, got 5/,
    ],
    [
      'accumulate length',
      () => columnSums(new Float32Array(6), 2, 3, new Float32Array(2)),
      /accumulate must have cols = 3 elements, got 2/,
    ],
  ])('rejects bad input: %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});
