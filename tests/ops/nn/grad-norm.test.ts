import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { clipScale, gradNorm } from '../../../src/ops/nn/grad-norm';

describe('gradNorm (CPU reference)', () => {
  it('is 13 for the 3-4-12 triangle, in either precision', () => {
    // √(3² + 4² + 12²) = √(9 + 16 + 144) = √169 = 13
    expect(gradNorm(new Float32Array([3, 4, 12]))).toBe(13);
    expect(gradNorm(new Float64Array([3, -4, 0, 12]))).toBe(13);
  });

  it('accumulates in float64: no overflow for large finite f32 values', () => {
    // (1e30)² = 1e60 overflows f32 but not float64: √(2·1e60) = √2·1e30.
    expect(gradNorm(new Float32Array([1e30, 1e30]))).toBeCloseTo(Math.SQRT2 * 1e30, -24);
  });

  it('reports NaN for a NaN gradient and +∞ for an infinite one, as PyTorch does', () => {
    expect(gradNorm(new Float32Array([1, NaN, 2]))).toBeNaN();
    expect(gradNorm(new Float32Array([1, -Infinity, 2]))).toBe(Infinity);
    expect(gradNorm(new Float32Array([Infinity, NaN]))).toBeNaN();
  });

  it('property: ‖c·g‖ = |c|·‖g‖', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 50 }),
        fc.double({ min: -10, max: 10, noNaN: true }),
        (values, c) => {
          const g = new Float64Array(values);
          const scaled = gradNorm(g.map((x) => c * x));
          expect(scaled).toBeCloseTo(Math.abs(c) * gradNorm(g), 8);
        },
      ),
    );
  });
});

describe('clipScale (PyTorch clip_grad_norm_ coefficient)', () => {
  it.each<[string, number, number, number]>([
    // coef = maxNorm / (norm + 1e-6), clamped to ≤ 1.
    ['norm above maxNorm', 2, 1, 1 / (2 + 1e-6)], // 0.49999975
    ['norm equal to maxNorm', 1, 1, 1 / (1 + 1e-6)], // 0.999999: PyTorch still scales a hair
    ['norm below maxNorm', 0.5, 1, 1], // 1 / 0.500001 ≈ 2 → clamped to 1
    ['zero gradient', 0, 1, 1], // 1 / 1e-6 = 1e6 → 1
    ['large norm', 1000, 0.5, 0.5 / (1000 + 1e-6)],
    ['maxNorm = 0 disables clipping', 10, 0, 1],
    ['negative maxNorm disables clipping', 10, -1, 1],
    ['maxNorm = ∞ disables clipping', 1e30, Infinity, 1],
    ['NaN norm: the step is skipped', NaN, 1, 0],
    ['infinite norm: the step is skipped', Infinity, 1, 0],
    ['infinite norm, clipping off: still skipped', Infinity, 0, 0],
  ])('%s: clipScale(%d, %d) = %d', (_, norm, maxNorm, expected) => {
    expect(clipScale(norm, maxNorm)).toBeCloseTo(expected, 14);
  });

  it('rejects a NaN maxNorm', () => {
    expect(() => clipScale(1, NaN)).toThrow(OpInputError);
    expect(() => clipScale(1, NaN)).toThrow(/maxNorm must be a number/);
  });

  it('property: the clipped norm is min(norm, maxNorm) up to the 1e-6 guard', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
        (norm, maxNorm) => {
          const clipped = norm * clipScale(norm, maxNorm);
          expect(clipped).toBeLessThanOrEqual(maxNorm);
          expect(clipped).toBeCloseTo(Math.min(norm, maxNorm), 4);
        },
      ),
    );
  });
});
