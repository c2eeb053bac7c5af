import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { matmul, matmulLoops, type MatmulShape } from '../../../src/ops/nn/matmul';
import { matmulSimd, SCRATCH_BYTES, simdKernel } from '../../../src/ops/nn/matmul-simd';
import { sameBits } from '../../support/bits';
import { randomF64 } from '../../support/gradcheck';

/** Element strides as matmul() derives them (op(A)[i, p] = a[i·aRow + p·aInner], …). */
function strides(shape: MatmulShape) {
  return {
    aRow: shape.transA ? 1 : shape.k,
    aInner: shape.transA ? shape.m : 1,
    bInner: shape.transB ? 1 : shape.n,
    bCol: shape.transB ? shape.k : 1,
  };
}

const kernel = simdKernel();

describe('matmul: the WebAssembly SIMD kernel', () => {
  it('compiles in Node (WebAssembly SIMD is part of every supported runtime)', () => {
    expect(kernel).not.toBeNull();
  });

  it('property: equals the JavaScript loops bit for bit, in both precisions, with bias and accumulate', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 37 }),
        fc.integer({ min: 1, max: 23 }),
        fc.integer({ min: 1, max: 37 }),
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom('none', 'bias', 'accumulate', 'both'),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (m, k, n, transA, transB, f64, extra, seed) => {
          const make = (length: number, offset: number) => {
            const values = randomF64(length, 4, seed + offset);
            return f64 ? values : new Float32Array(values);
          };
          const a = make(m * k, 0);
          const b = make(k * n, 1);
          const options = {
            ...(extra === 'bias' || extra === 'both' ? { bias: make(n, 2) } : {}),
            ...(extra === 'accumulate' || extra === 'both' ? { accumulate: make(m * n, 3) } : {}),
          };
          const shape = { m, k, n, transA, transB };
          const expected = matmulLoops(a, b, shape, options);
          const out = f64 ? new Float64Array(m * n) : new Float32Array(m * n);
          expect(matmulSimd(kernel!, a, b, shape, strides(shape), options, out)).toBe(true);
          expect(sameBits(out, expected)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps signed zeros, infinities and NaN as the loops do', () => {
    // Column 0: row 0 sums +0 + (−0·1) + (−0·0) = +0; row 1 meets ∞·0 = NaN; row 2 sums to −∞.
    // Column 1: row 3 sums 3e38·2 + 3e38·5 = 2.1e39 in float64, which rounds to +∞ in float32.
    const a = new Float32Array([-0, -0, 1, Infinity, -Infinity, 1, 3e38, 3e38]);
    const b = new Float32Array([1, 2, 0, 5]);
    const shape = { m: 4, k: 2, n: 2 };
    const expected = matmulLoops(a, b, shape);
    const out = new Float32Array(8);
    expect(matmulSimd(kernel!, a, b, shape, strides(shape), {}, out)).toBe(true);
    expect(sameBits(out, expected)).toBe(true);
    expect(Object.is(out[0], 0)).toBe(true);
    expect(out[2]).toBeNaN();
    expect(out[4]).toBe(-Infinity);
    expect(out[7]).toBe(Infinity);
  });

  it('takes columns and rows in chunks when the operands outgrow its scratch, with the same bits', () => {
    // k = 2048: one 4-column panel is 64 KiB, so 600 columns (150 panels, 9.4 MiB) are more than
    // the half of the scratch B may use, and 500 rows do not fit the other half in one chunk.
    const shape = { m: 500, k: 2048, n: 600, transB: true };
    expect((Math.ceil(shape.n / 4) * shape.k * 32) / (SCRATCH_BYTES / 2)).toBeGreaterThan(1);
    const a = new Float32Array(randomF64(shape.m * shape.k, 1, 7));
    const b = new Float32Array(randomF64(shape.n * shape.k, 1, 8));
    const bias = new Float32Array(randomF64(shape.n, 1, 9));
    const out = new Float32Array(shape.m * shape.n);
    expect(matmulSimd(kernel!, a, b, shape, strides(shape), { bias }, out)).toBe(true);
    expect(sameBits(out, matmulLoops(a, b, shape, { bias }))).toBe(true);
    // Its memory stays within the scratch budget (plus one 64 KiB page of rounding).
    expect(kernel!.memory.buffer.byteLength).toBeLessThanOrEqual(SCRATCH_BYTES + 65536);
  });

  it('declines a k whose single panel would exceed the scratch, and matmul() falls back to the loops', () => {
    const shape = { m: 1, k: 300_000, n: 1 };
    const a = new Float32Array(randomF64(shape.k, 1, 1));
    const b = new Float32Array(randomF64(shape.k, 1, 2));
    const out = new Float32Array(1);
    expect(matmulSimd(kernel!, a, b, shape, strides(shape), {}, out)).toBe(false);
    expect(out[0]).toBe(0); // nothing written
    expect(sameBits(matmul(a, b, shape), matmulLoops(a, b, shape))).toBe(true);
  });
});
